#!/usr/bin/env bash
# Builds the interception engine's native test host and the module's request
# path stress (binding/host/module_stress.cpp) with ThreadSanitizer and with
# AddressSanitizer (+ LeakSanitizer, UBSan) and runs them under each.
# Usage: bash scripts/sanitize-engine.sh [host threads] [requests per thread] [workers]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
engine=(binding/core/engine.cpp binding/core/abi.cpp)
module=(binding/iis/engine_slot.cpp binding/iis/deferred_decision.cpp)
args=("${1:-32}" "${2:-200}" "${3:-4}")
for sanitizer in thread address,undefined; do
  flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize="$sanitizer")
  g++ "${flags[@]}" binding/host/engine_stress.cpp "${engine[@]}" -o "$out/engine_stress" -lpthread
  g++ "${flags[@]}" binding/host/module_stress.cpp "${module[@]}" "${engine[@]}" -o "$out/module_stress" -lpthread
  echo "== -fsanitize=$sanitizer"
  "$out/engine_stress" "${args[@]}"
  "$out/module_stress" "${args[@]}"
done
rm -rf "$out"
