#!/usr/bin/env bash
# Usage: roundtrip.sh DOC BASE_URL
# The TypeScript round trip (roundtrip.ts) against a running service: types from DOC by
# openapi-typescript, the file compiled by tsc --strict, then run by Node.js. Needs
# `npm ci` here; writes to a temporary directory only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
doc=$(realpath -e "$1")
base=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$here/node_modules" "$work/node_modules"
echo '{"type": "module"}' >"$work/package.json"
"$here/node_modules/.bin/openapi-typescript" "$doc" -o "$work/schema.d.ts" --silent
cp "$here/roundtrip.ts" "$work/"
"$here/node_modules/.bin/tsc" --strict --target es2022 --module esnext --moduleResolution bundler \
  --lib es2022,dom --outDir "$work" "$work/roundtrip.ts"
node "$work/roundtrip.js" "$base"
