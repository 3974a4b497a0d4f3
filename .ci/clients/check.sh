#!/usr/bin/env bash
# Usage: check.sh DOC...
# For each OpenAPI document: the TypeScript types openapi-typescript writes, and a file that
# calls every operation through openapi-fetch (calls.py), must pass `tsc --strict`; the Python
# package openapi-python-client generates must come without warnings and import, every module
# of it, taking each body the document requires as a required argument (imports.py).
# Exits 1 naming each document and step or module that failed. Needs `npm ci` here and
# requirements.txt installed; writes to temporary directories only.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# pip's scripts directory: openapi-python-client runs the ruff it installed there.
PATH="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
[ $# -gt 0 ] || { echo "usage: $0 DOC..." >&2; exit 2; }

work=""
trap 'rm -rf "$work"' EXIT
failed=()
for doc in "$@"; do
  echo "-- $doc"
  path=$(realpath -e "$doc") || { failed+=("$doc: no such file"); continue; }
  rm -rf "$work"
  work=$(mktemp -d)

  # TypeScript. calls.ts finds openapi-fetch through a link to this directory's modules.
  ln -s "$here/node_modules" "$work/node_modules"
  if ! "$here/node_modules/.bin/openapi-typescript" "$path" -o "$work/schema.d.ts"; then
    failed+=("$doc: openapi-typescript")
  elif ! python3 "$here/calls.py" "$path" "$work/calls.ts"; then
    failed+=("$doc: calls.py")
  elif ! "$here/node_modules/.bin/tsc" --strict --noEmit --target es2022 --module esnext \
    --moduleResolution bundler "$work/calls.ts"; then
    failed+=("$doc: tsc --strict on the calls of every operation (errors above)")
  fi

  # Python. A warning means a schema the generator skipped, so it fails too.
  if ! python3 -m openapi_python_client generate --path "$path" --output-path "$work/client" \
    --meta none --fail-on-warning; then
    failed+=("$doc: openapi-python-client generate (warnings above)")
  elif ! problems=$(python3 "$here/imports.py" "$work/client" "$path"); then
    printf '%s\n' "$problems"
    while IFS= read -r line; do
      [ -n "$line" ] && failed+=("$doc: $line")
    done <<<"$problems"
    [ -n "$problems" ] || failed+=("$doc: imports.py")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "== generated clients: FAILED" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== generated clients: the TypeScript calls type-check and the Python packages import"
