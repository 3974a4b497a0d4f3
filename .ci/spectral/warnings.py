"""Holds Spectral's warnings on a document to the ones docs/openapi-lint.md explains.

Usage: python3 warnings.py <spectral JSON output> <docs/openapi-lint.md>

The "Warnings" table of the docs names each rule with its count. Any error, any rule
the table lacks, or a count that differs fails, so a new warning cannot land unexplained
and a fixed one cannot stay documented.
"""

import collections
import json
import re
import sys


def documented(path):
    counts, section = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            section = line[3:].strip()
        m = re.match(r"^\|\s*`([^`]+)`(?:,\s*`[^`]+`)*\s*\|\s*([0-9,]+)\s*\|", line)
        if section == "Warnings" and m:
            counts[m.group(1)] = int(m.group(2).replace(",", ""))
    return counts


def main(report, docs):
    results = json.load(open(report, encoding="utf-8"))
    errors = [r for r in results if r["severity"] == 0]
    warnings = collections.Counter(r["code"] for r in results if r["severity"] == 1)
    expected = documented(docs)
    problems = [f"error {r['code']} at {'.'.join(map(str, r['path']))}: {r['message']}" for r in errors]
    for rule in sorted(set(warnings) | set(expected)):
        if warnings[rule] != expected.get(rule, 0):
            problems.append(f"{rule}: {warnings[rule]} warnings, {docs} explains {expected.get(rule, 0)}")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"spectral: 0 errors, {sum(warnings.values())} warnings, each explained in {docs}")


if __name__ == "__main__":
    main(*sys.argv[1:])
