#!/usr/bin/env bash
# The prebuilt addons the npm package ships, in prebuildify's layout, which node-gyp-build reads
# at run time (src/native/addon-location.ts):
#   prebuilds/linux-x64/node.napi.glibc.node   built here with g++ (glibc: this machine's)
#   prebuilds/win32-x64/node.napi.node         cross-built with Debian's mingw-w64
# Both are Node-API 8 addons: one file serves every Node version the package supports.
# No musl build: Debian has no C++ toolchain for musl, so Alpine installs build from source.
#   npm run build:prebuilds        (installs mingw-w64 with apt-get when run as root)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$root/build/prebuilds
node_include="$(dirname "$(dirname "$(command -v node)")")/include/node"
[ -f "$node_include/openssl/evp.h" ] || { echo "build-prebuilds: no OpenSSL headers under $node_include" >&2; exit 1; }
rm -rf "$root/prebuilds" "$work"
mkdir -p "$work" "$root/prebuilds/linux-x64" "$root/prebuilds/win32-x64"

# linux-x64, glibc: the install step's build, without the test hosts, in a directory of its own
# so that a checkout's build/Release (and the tests using it) is left alone. It links the system's
# libstdc++ as Node itself does: linking it in statically would raise the glibc it needs to this
# machine's own (2.36, for arc4random) and shut out Ubuntu 22.04, which the shared one serves.
node node_modules/cmake-js/bin/cmake-js compile --directory "$root" --out "$work/linux-x64" \
  --CDGATEHOUSE_NODE_INCLUDE="$node_include" --CDGATEHOUSE_TEST_HOSTS=OFF --target gatehouse_native --log-level warn >/dev/null
strip --strip-unneeded -o "$root/prebuilds/linux-x64/node.napi.glibc.node" "$work/linux-x64/Release/gatehouse_native.node"

# win32-x64: Node-API and the OpenSSL functions the core calls are node.exe's exports. The addon
# delay-loads them (as cmake-js links the MSVC build: /DELAYLOAD:node.exe), resolved by the
# project's hook (binding/iis/delay_load_hook.cpp), so the same file also loads inside IIS,
# where Node is libnode.dll.
if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null || ! command -v x86_64-w64-mingw32-dlltool >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64 >/dev/null
  else
    echo "build-prebuilds: needs mingw-w64 (apt-get install g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64)" >&2
    exit 2
  fi
fi
exports=$work/win32-x64/node-exports
mkdir -p "$exports"
{
  cat node_modules/node-api-headers/def/node_api.def
  echo
  # Every OpenSSL function binding/core calls, as named in its sources.
  grep -ohE '\b(EVP_[A-Za-z_]+|CRYPTO_memcmp|OPENSSL_cleanse)\(' binding/core/*.cpp | tr -d '(' | sort -u
} > "$exports/node.def"
x86_64-w64-mingw32-dlltool --input-def "$exports/node.def" --output-lib "$exports/libnode.a" --dllname node.exe
x86_64-w64-mingw32-dlltool --input-def "$exports/node.def" --output-delaylib "$exports/libnode_delay.a" --dllname node.exe
cmake -S "$root" -B "$work/win32-x64/cmake" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64-x86_64.cmake" -DGATEHOUSE_TEST_HOSTS=OFF \
  -DGATEHOUSE_NODE_INCLUDE="$node_include" \
  -DGATEHOUSE_NODE_IMPORT_LIB="$exports/libnode.a" -DGATEHOUSE_NODE_DELAY_IMPORT_LIB="$exports/libnode_delay.a" \
  -DGATEHOUSE_NODE_API_INCLUDE="$root/node_modules/node-api-headers/include" \
  -DGATEHOUSE_NODE_ADDON_API_INCLUDE="$root/node_modules/node-addon-api" >/dev/null
cmake --build "$work/win32-x64/cmake" --target gatehouse_native -j 2 >/dev/null
x86_64-w64-mingw32-strip --strip-unneeded -o "$root/prebuilds/win32-x64/node.napi.node" "$work/win32-x64/cmake/Release/gatehouse_native.node"

# What the Linux file asks of the system: the newest glibc and libstdc++ symbol versions it uses.
needs() { objdump -T prebuilds/linux-x64/node.napi.glibc.node | grep -oE "$1_[0-9.]+" | sort -uV | tail -n 1; }
for file in prebuilds/*/*.node; do
  echo "build-prebuilds: $file ($(stat -c %s "$file") bytes)"
done
echo "build-prebuilds: the linux-x64 addon needs $(needs GLIBC) and $(needs GLIBCXX) (libstdc++) or later"
