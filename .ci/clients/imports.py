"""Imports every module of a package openapi-python-client generated, and holds it to the document.

    python3 imports.py PACKAGE_DIR DOC

Prints one line per module that fails (NameError and the like, raised at import where an
annotation names something the module does not import) and per operation whose request body
the document requires but the package made optional; exits 1 if there is any.
"""

import importlib
import inspect
import json
import os
import pkgutil
import re
import sys
import traceback


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    package_dir, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    with open(doc, encoding="utf-8") as f:
        document = json.load(f)
    paths = document["paths"]
    sys.path.insert(0, os.path.dirname(package_dir))
    name = os.path.basename(package_dir)
    count, problems = 0, []
    for module in pkgutil.walk_packages(importlib.import_module(name).__path__, f"{name}."):
        count += 1
        try:
            loaded = importlib.import_module(module.name)
        except Exception as error:  # noqa: BLE001 - whatever a module raises, it is reported
            frame = traceback.extract_tb(error.__traceback__)[-1]
            where = os.path.relpath(frame.filename, os.path.dirname(package_dir))
            problems.append(f"{module.name}: {type(error).__name__}: {error} ({where}:{frame.lineno})")
            continue
        # openapi-python-client makes a required body optional (body=UNSET) where the
        # operation lists more than one media type, and sends only the last one's Content-Type.
        kwargs = getattr(loaded, "_get_kwargs", None)
        if kwargs is None or "body" not in inspect.signature(kwargs).parameters:
            continue
        source = inspect.getsource(kwargs)
        method = re.search(r'"method": "(\w+)"', source).group(1)
        url = re.search(r'"url": "([^"]*)"', source).group(1)
        body = paths[url][method].get("requestBody", {})
        for _ in range(8):  # a $ref to #/components/requestBodies/..., followed
            if "$ref" not in body:
                break
            ref, body = body["$ref"], document
            for part in ref[2:].split("/"):
                body = body[part.replace("~1", "/").replace("~0", "~")]
        optional = inspect.signature(kwargs).parameters["body"].default is not inspect.Parameter.empty
        if body.get("required") and optional:
            media = ", ".join(body.get("content", {}))
            problems.append(f"{module.name}: {method.upper()} {url} requires a body, the package makes it"
                            f" optional (body=UNSET; the body lists {media})")
    for problem in problems:
        print(problem)
    print(f"{name}: {count} modules imported, {len(problems)} problems", file=sys.stderr)
    sys.exit(1 if problems or not count else 0)


if __name__ == "__main__":
    main()
