"""Writes a TypeScript file that calls every operation of an OpenAPI document.

    python3 calls.py DOC OUT.ts [TYPES_MODULE]

Each path and method becomes one openapi-fetch call on createClient<paths, JSON types>(), with the
operation's required path, query, header and cookie parameters and, where it takes one, a
minimal valid request body: required properties only, strings "x" (or a value of their
format), numbers 0 (or their minimum), booleans false, enums and consts their first value,
arrays [] (or minItems values), $ref followed. `paths` comes from TYPES_MODULE (default
./schema, what `openapi-typescript DOC -o schema.d.ts` writes), so `tsc --strict` on the
output says whether the generated types accept every operation as the document states it.
Derived from the document so that it stays complete as operations are added.
"""

import json
import re
import sys

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Values for the string formats a JSON Schema validator checks, and those "x" would not pass.
FORMATS = {
    "uuid": "00000000-0000-0000-0000-000000000000",
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "duration": "PT0S",
    "email": "x@example.com",
    "idn-email": "x@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "url": "https://example.com/",
    "uri-reference": "x",
    "iri-reference": "x",
    "uri-template": "x",
    "json-pointer": "",
    "relative-json-pointer": "0",
    "regex": "x",
    "byte": "eA==",
}


def fail(message):
    sys.exit(f"calls.py: {message}")


class Document:
    def __init__(self, doc):
        self.doc = doc

    def resolve(self, node, seen=()):
        """Follows $ref (local JSON pointers) until a node without one."""
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                fail(f"only local references are followed: {ref}")
            if ref in seen:
                fail(f"reference cycle at {ref}")
            seen = seen + (ref,)
            target = self.doc
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                target = target[int(part)] if isinstance(target, list) else target[part]
            node = target
        return node

    def value(self, schema, where, refs=()):
        """A minimal valid instance of `schema`, as a JSON value."""
        if isinstance(schema, dict) and "$ref" in schema:
            ref = schema["$ref"]
            if ref in refs:
                fail(f"{where}: a required property cycles through {ref}; no finite value")
            return self.value(self.resolve(schema), where, refs + (ref,))
        if not isinstance(schema, dict) or not schema:
            return "x"  # true or {}: any value
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][0]
        if "allOf" in schema:
            parts = [self.value(s, where, refs) for s in schema["allOf"]]
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            if rest.get("properties") or rest.get("required"):
                parts.append(self.value(rest, where, refs))
            if all(isinstance(p, dict) for p in parts):
                merged = {}
                for p in parts:
                    merged.update(p)
                return merged
            return parts[0]
        for key in ("oneOf", "anyOf"):
            if key in schema:
                branches = [s for s in schema[key] if not isinstance(s, dict) or self.resolve(s).get("type") != "null"]
                return self.value((branches or schema[key])[0], where, refs)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            kind = kinds[0] if kinds else "null"
        if kind is None:
            kind = "object" if "properties" in schema or "required" in schema else (
                "array" if "items" in schema else None)
        if kind == "null":
            return None
        if kind == "boolean":
            return False
        if kind in ("integer", "number"):
            n = 0
            if "minimum" in schema and schema["minimum"] > n:
                n = schema["minimum"]
            if isinstance(schema.get("exclusiveMinimum"), (int, float)) and schema["exclusiveMinimum"] >= n:
                n = int(schema["exclusiveMinimum"]) + 1
            if "maximum" in schema and schema["maximum"] < n:
                n = schema["maximum"]
            return int(n) if kind == "integer" else n
        if kind == "string":
            s = FORMATS.get(schema.get("format"), "x")
            s = s + "x" * max(0, schema.get("minLength", 0) - len(s))
            if "maxLength" in schema:
                s = s[: schema["maxLength"]]
            pattern = schema.get("pattern")
            if pattern is not None and not matches(pattern, s):
                s = example(pattern)
                if s is None or not matches(pattern, s) or not (
                        schema.get("minLength", 0) <= len(s) <= schema.get("maxLength", len(s))):
                    print(f"calls.py: {where}: no value found for {pattern!r}; the type is all that is checked",
                          file=sys.stderr)
                    s = "x"
            return s
        if kind == "array":
            n = schema.get("minItems", 0)
            items = schema.get("items", {})
            resolved = self.resolve(items)
            if isinstance(resolved, dict) and "enum" in resolved and schema.get("uniqueItems"):
                return resolved["enum"][:n]
            return [self.value(items, f"{where}[]", refs) for _ in range(n)]
        if kind == "object":
            props = schema.get("properties", {})
            out = {}
            for name in schema.get("required", []):
                sub = props.get(name)
                if sub is None:
                    extra = schema.get("additionalProperties")
                    sub = extra if isinstance(extra, dict) else {}
                # readOnly ones too: without --read-write-markers the types require them.
                out[name] = self.value(sub, f"{where}.{name}", refs)
            return out
        return "x"  # no type: anything goes


def matches(pattern, s):
    """ECMA-262 patterns are unanchored, as re.search is; Python reads the ones documents use."""
    try:
        return re.search(pattern, s) is not None
    except re.error:
        return False


def example(pattern):
    """The shortest string the pattern describes, walking Python's parse of it (None if it cannot)."""
    try:
        from re import _constants as c  # Python 3.11+
        from re import _parser as parser
    except ImportError:
        import sre_constants as c
        import sre_parse as parser

    def member(ch, items):
        hit, negate = False, False
        for op, arg in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                hit |= ord(ch) == arg
            elif op is c.RANGE:
                hit |= arg[0] <= ord(ch) <= arg[1]
            elif op is c.CATEGORY:
                hit |= re.fullmatch(CATEGORIES.get(arg, "(?!)"), ch) is not None
        return hit != negate

    CATEGORIES = {c.CATEGORY_DIGIT: r"\d", c.CATEGORY_NOT_DIGIT: r"\D", c.CATEGORY_WORD: r"\w",
                  c.CATEGORY_NOT_WORD: r"\W", c.CATEGORY_SPACE: r"\s", c.CATEGORY_NOT_SPACE: r"\S"}

    def walk(seq):
        out = []
        for op, arg in seq:
            if op is c.LITERAL:
                out.append(chr(arg))
            elif op is c.NOT_LITERAL or op is c.ANY:
                out.append("x" if arg != ord("x") else "y")
            elif op is c.IN:
                ch = next((ch for ch in "xa0A_-. !" if member(ch, arg)), None)
                if ch is None:
                    raise ValueError(arg)
                out.append(ch)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
                low, _high, sub = arg
                out.append(walk(sub) * low)
            elif op is c.SUBPATTERN:
                out.append(walk(arg[-1]))
            elif op is c.BRANCH:
                out.append(walk(arg[1][0]))
            elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
                continue
            else:
                raise ValueError(op)
        return "".join(out)

    try:
        return walk(parser.parse(pattern))
    except (ValueError, re.error, TypeError):
        return None


def ts(value):
    """A JSON value as a TypeScript expression (JSON is one)."""
    return json.dumps(value, ensure_ascii=False)


def parameters(doc, item, op):
    """The operation's parameters, path-level ones included unless it overrides them."""
    merged = {}
    for raw in item.get("parameters", []) + op.get("parameters", []):
        p = doc.resolve(raw)
        merged[(p["name"], p["in"])] = p
    return list(merged.values())


def body_media(content):
    """The media type whose schema the call's body is built from: JSON first."""
    for media in content:
        bare = media.split(";")[0].strip().lower()
        if bare == "application/json" or bare.endswith("+json"):
            return media
    return next(iter(content))


def is_json(media):
    """The media types the client reads as JSON: `createClient<paths, JSON_MEDIA>`."""
    essence = media.split(";")[0].strip().lower()
    return essence.split("/")[-1].endswith("json")


def required_of(doc, schema):
    """The properties a schema (through $ref and allOf) says every instance has."""
    schema = doc.resolve(schema)
    names = list(schema.get("required", []))
    for part in schema.get("allOf", []):
        names += [n for n in required_of(doc, part) if n not in names]
    return names


def readings(doc, op):
    """What a call's answer is read for, as TypeScript: a required field of its JSON 2xx
    answer (or an array's length), and a problem's `title`; each None where there is none."""
    data = error = None
    for status, response in sorted(op.get("responses", {}).items()):
        content = doc.resolve(response).get("content", {})
        json_media = [m for m in content if is_json(m)]
        if not json_media:
            continue
        schema = doc.resolve(content[json_media[0]].get("schema", {}))
        if status.startswith("2") and data is None:
            if schema.get("type") == "array":
                data = "r.data.length"
            elif required_of(doc, schema):
                data = f"r.data[{ts(required_of(doc, schema)[0])}]"
        elif status[0] in "45" and error is None and "title" in required_of(doc, schema):
            error = "r.error.title"
    return data, error


def calls(raw):
    doc = Document(raw)
    lines = []
    explodes = set()
    for path, item in raw.get("paths", {}).items():
        item = doc.resolve(item)
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            name = op.get("operationId", f"{method} {path}")
            params = {}
            for p in parameters(doc, item, op):
                schema = p.get("schema") or next(iter(p.get("content", {}).values()), {}).get("schema", {})
                if p["in"] == "query" and doc.resolve(schema).get("type") == "array":
                    explodes.add((p.get("style", "form"), p.get("explode", p.get("style", "form") == "form")))
                if p.get("required") or p["in"] == "path":
                    where = f"{name} {p['in']} {p['name']}"
                    params.setdefault(p["in"], {})[p["name"]] = doc.value(schema, where)
            init = {}
            if params:
                init["params"] = params
            body = op.get("requestBody")
            media = None
            if body is not None:
                content = doc.resolve(body).get("content", {})
                if content:
                    media = body_media(content)
                    init["body"] = doc.value(content[media].get("schema", {}), f"{name} body")
                    if media.split(";")[0].strip().lower() != "application/json":
                        # openapi-fetch says application/json unless told otherwise.
                        init["headers"] = {"Content-Type": media}
            args = [ts(path)]
            if init:
                args.append(ts(init))
            lines.append(f"  // {name}" + (f" ({media})" if media else ""))
            # The answer read as typed: a field of the JSON answer, a problem's title.
            data, error = readings(doc, op)
            read = []
            if error:
                read.append(f"if (r.error) results.push({error});")
            if data:
                read.append(f"if (r.data) results.push({data});")
            lines.append(f"  {{ const r = await client.{method.upper()}({', '.join(args)}); {' '.join(read)} results.push(r); }}")
    return lines, explodes


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    types = sys.argv[3] if len(sys.argv) == 4 else "./schema"
    with open(source, encoding="utf-8") as f:
        raw = json.load(f)
    lines, explodes = calls(raw)
    if not lines:
        fail(f"{source} has no operations")
    serializer = ""
    # The document's array query parameters' serialization, when they agree on one.
    if len(explodes) == 1:
        style, explode = explodes.pop()
        if style == "form":
            serializer = f', querySerializer: {{ array: {{ style: "form", explode: {ts(explode)} }} }}'
    text = "\n".join([
        f"// Generated by .ci/clients/calls.py from {source.rsplit('/', 1)[-1]}: every operation, called once.",
        'import createClient from "openapi-fetch";',
        f'import type {{ paths }} from "{types}";',
        "",
        "// The JSON media types alone (docs/openapi-lint.md): answers and problems read as typed.",
        f'const client = createClient<paths, `${{string}}/${{string}}json`>({{ baseUrl: "http://localhost"{serializer} }});',
        "",
        "export async function callEveryOperation(): Promise<unknown[]> {",
        "  const results: unknown[] = [];",
        *lines,
        "  return results;",
        "}",
        "",
    ])
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"calls.py: {len(lines) // 2} operations -> {out}")


if __name__ == "__main__":
    main()
