#!/usr/bin/env bash
# Builds the interception engine's native test host with ThreadSanitizer and
# with AddressSanitizer (+ LeakSanitizer, UBSan) and runs it under each.
# Usage: bash scripts/sanitize-engine.sh [host threads] [requests per thread] [workers]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
sources=(binding/host/engine_stress.cpp binding/core/engine.cpp binding/core/abi.cpp)
args=("${1:-32}" "${2:-200}" "${3:-4}")
for sanitizer in thread address,undefined; do
  g++ -std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize="$sanitizer" "${sources[@]}" -o "$out/stress" -lpthread
  echo "== -fsanitize=$sanitizer"
  "$out/stress" "${args[@]}"
done
rm -rf "$out"
