#!/usr/bin/env bash
# The IIS module's ABI, checked without Windows: clang in MSVC mode (--target=x86_64-pc-windows-msvc)
# lays out the vtables of the project's IIS declarations (test/win32/iis-declarations/httpserv.h)
# the way MSVC does, and prints them (-fdump-vtable-layouts). The compilations:
#   - test/win32/iis-layout/probe.cpp, which calls every IIS method the module calls
#     (and every method IIS calls on the module), so every interface's vtable is printed;
#   - each of the module's sources that speak to IIS (module.cpp, gatehouse_module.cpp, ...: code
#     generation to nowhere, no libnode, no link), so the module compiles in MSVC mode and its
#     own classes override in IIS's slots.
# Then, syntax only, the module's other Windows sources in MSVC mode: node_runtime.cpp and
# linked_binding.cpp (against the running Node's headers), stack_thread.cpp, delay_load_hook.cpp
# and the module's helpers that need only Windows (the event log, the pool's settings, ...).
# test/win32/iis-layout/check.cjs compares each slot with test/win32/iis-vtable-slots.json.
# Headers: Debian's mingw-w64 Windows headers and libstdc++ (g++-mingw-w64-x86-64-posix).
# Prints "N passed, N failed"; exits non-zero on any failure.
#   bash scripts/win32/iis-layout.sh      (installs clang with apt-get if missing: as root, else with sudo)
set -uo pipefail
cd "$(dirname "$0")/../.."

if ! command -v clang++ >/dev/null; then
  echo "iis-layout: installing clang"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
  fi
fi
mingw_gxx=x86_64-w64-mingw32-g++-posix
if ! command -v clang++ >/dev/null || ! command -v "$mingw_gxx" >/dev/null || [ ! -f /usr/share/mingw-w64/include/windows.h ]; then
  echo "iis-layout: needs clang and mingw-w64 (apt-get install clang g++-mingw-w64-x86-64-posix)"
  echo "0 passed, 1 failed"
  exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc_dir=$(dirname "$("$mingw_gxx" -print-libgcc-file-name)")
cxx_include="$gcc_dir/include/c++"
# clang in MSVC mode over mingw-w64's headers: __GNUC__ keeps their GNU spellings (their
# non-GNU branch defines __attribute__ away), and a __declspec macro that names itself tells
# them __declspec works (else they leave __MINGW_IMPORT undefined).
msvc_syntax=(clang++ --target=x86_64-pc-windows-msvc -std=c++17 -fgnuc-version=4.2.1 -nostdinc
  -isystem "$cxx_include" -isystem "$cxx_include/x86_64-w64-mingw32" -isystem "$(clang++ -print-resource-dir)/include"
  -isystem /usr/share/mingw-w64/include -D__declspec=__declspec -Wno-#warnings
  -I "${GATEHOUSE_IIS_DECLARATIONS:-test/win32/iis-declarations}"
  -DNAPI_VERSION=8 -DUNICODE -D_UNICODE -DNOMINMAX -Wall -Wextra -Werror)
msvc=("${msvc_syntax[@]}" -Xclang -fdump-vtable-layouts -S -emit-llvm -o /dev/null)

# Each compilation is a check of its own; whatever compiled is checked slot by slot.
passed=0
failed=0
dumps=()
# The module's files that speak to IIS: every one that includes iis_sdk.h (httpserv.h), itself
# or through its own header. Its sources are compiled and laid out; all of them, headers too,
# are searched for IIS calls.
module_sources=()
module_files=()
for file in binding/iis/*.h binding/iis/*.cpp; do
  own=$file
  [ "${file%.cpp}" = "$file" ] || own="${file%.cpp}.h"
  grep -qs '^#include "iis_sdk.h"' "$file" "$own" || continue
  module_files+=("$file")
  [ "${file%.cpp}" = "$file" ] || module_sources+=("$file")
done
for source in test/win32/iis-layout/probe.cpp "${module_sources[@]}"; do
  label=$(basename "$source" .cpp)
  [ "$source" = test/win32/iis-layout/probe.cpp ] || label="module:$label"
  if "${msvc[@]}" "$source" > "$out/$label.txt" 2> "$out/$label.err"; then
    echo "ok - $source compiles in MSVC mode against the declarations"
    passed=$((passed + 1))
    dumps+=("$label=$out/$label.txt")
  else
    cat "$out/$label.err"
    echo "not ok - $source compiles in MSVC mode against the declarations"
    failed=$((failed + 1))
  fi
done
# The module's other Windows sources, in MSVC mode too (syntax only: no libnode, no MSVC CRT
# here): the Node embedding (the process-exit handler, the 8 MB thread) against the running
# Node's own headers (C++17: Node 20's V8 headers take it; clang 14 cannot read libstdc++ 12's
# C++20 headers in MSVC mode), the thread, and the addon's delay-load hook.
node_include="$(dirname "$(dirname "$(command -v node)")")/include/node"
for source in binding/iis/node_runtime.cpp binding/iis/linked_binding.cpp binding/iis/stack_thread.cpp binding/iis/delay_load_hook.cpp \
  binding/iis/event_log.cpp binding/iis/pool_settings.cpp binding/iis/module_files.cpp binding/iis/wide_text.cpp; do
  if "${msvc_syntax[@]}" -fsyntax-only -isystem "$node_include" "$source" > /dev/null 2> "$out/syntax.err"; then
    echo "ok - $source compiles in MSVC mode"
    passed=$((passed + 1))
  else
    cat "$out/syntax.err"
    echo "not ok - $source compiles in MSVC mode"
    failed=$((failed + 1))
  fi
done
node test/win32/iis-layout/check.cjs test/win32/iis-vtable-slots.json test/win32/iis-layout/probe.cpp \
  "${dumps[@]}" "${module_files[@]}" > "$out/check.txt"
status=$?
summary=$(tail -n 1 "$out/check.txt")
head -n -1 "$out/check.txt"
if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
  passed=$((passed + BASH_REMATCH[1]))
  failed=$((failed + BASH_REMATCH[2]))
else
  echo "$summary"
  failed=$((failed + 1))
fi
[ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
