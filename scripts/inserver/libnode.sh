#!/usr/bin/env bash
# Node built as a shared library (Debian's libnode-dev: libnode.so and the embedder's headers),
# which the in-server embedding tests build a test host against (test/inserver/embedding.test.ts).
# Prints the root it lives under: / when libnode-dev is installed, else build/libnode, where the
# packages are unpacked. Debian's libnode108 conflicts with the nodejs package of other sources
# (NodeSource's, say), which must stay: then `apt-get install libnode-dev` cannot be used, and
# `apt-get download` + `dpkg-deb -x` unpack the same files into the project instead. What
# libnode.so needs at run time is installed with apt-get (as root, or with sudo): libuv and
# c-ares, and the JavaScript Debian's build keeps outside the library (acorn, cjs-module-lexer
# and undici, read from /usr/share/nodejs, where no other package puts anything).
#   bash scripts/inserver/libnode.sh        (npm test's embedding test finds what it made)
set -euo pipefail
cd "$(dirname "$0")/../.."
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
runtime_packages=(libuv1-dev libc-ares2 node-acorn node-cjs-module-lexer node-undici)
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
installed() { [ "$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null | grep -c 'install ok installed')" -eq $# ]; }
if [ -e "/usr/lib/$multiarch/libnode.so" ] && [ -f /usr/include/node/node.h ]; then
  echo /
  exit 0
fi
root="$PWD/build/libnode"
if [ -e "$root/usr/lib/$multiarch/libnode.so" ] && [ -f "$root/usr/include/node/node.h" ] &&
  installed "${runtime_packages[@]}"; then
  echo "$root"
  exit 0
fi

# The plain way first; it fails (and changes nothing) where another nodejs package is installed.
if as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnode-dev >/dev/null 2>&1; then
  echo /
  exit 0
fi
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${runtime_packages[@]}" >/dev/null
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
(cd "$debs" && apt-get download libnode108 libnode-dev >/dev/null 2>&1)
rm -rf "$root"
mkdir -p "$root"
for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
echo "$root"
