#!/usr/bin/env bash
# The npm package leg: build the prebuilt addons, then pack the package, install the tarball
# into a new app offline and run it there (test/package/tarball-install.spec.ts).
# Prints "N passed, N failed" and exits non-zero on any failure.
#   npm run test:package
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! bash scripts/package/build-prebuilds.sh; then
  echo "0 passed, 1 failed"
  exit 1
fi
npx mocha --no-config --node-option import=tsx --reporter test/support/count-reporter.cjs \
  --timeout 300000 --exit 'test/package/*.spec.ts'
