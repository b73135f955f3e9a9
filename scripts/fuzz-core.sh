#!/usr/bin/env bash
# Coverage-guided fuzzing of the C++ core's two entry points that take attacker-chosen bytes:
# identity header normalization (binding/host/fuzz_normalize.cpp) and webhook signature
# verification (binding/host/fuzz_verify.cpp), each built with libFuzzer, AddressSanitizer and
# UBSan (clang; the verifier against the system's OpenSSL). Each target runs for the given number
# of seconds from an empty corpus (or the one in the directory given); any crash, sanitizer report
# or failed check stops it with the input that caused it, and the script exits non-zero.
# Usage: bash scripts/fuzz-core.sh [seconds per target, default 60] [corpus directory]
#   (installs clang-14 and libclang-rt-14-dev with apt-get when run as root)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clang" ] || [ ! -f /usr/include/openssl/hmac.h ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev libssl-dev >/dev/null
    clang=$(command -v clang++-14)
  else
    echo "needs clang++ with libFuzzer and libssl-dev (apt-get install clang-14 libclang-rt-14-dev libssl-dev)" >&2
    exit 2
  fi
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
"$clang" "${flags[@]}" binding/host/fuzz_normalize.cpp binding/core/normalize.cpp binding/core/header_names.cpp binding/core/principal.cpp -o "$out/fuzz_normalize"
"$clang" "${flags[@]}" binding/host/fuzz_verify.cpp binding/core/hmac.cpp binding/core/signature_header.cpp -o "$out/fuzz_verify" -lcrypto
for target in fuzz_normalize fuzz_verify; do
  # The corpus grows in the directory given (kept for the next run), else in a temporary one.
  corpus=${2:+$2/$target}
  corpus=${corpus:-$out/corpus-$target}
  mkdir -p "$corpus"
  echo "== $target, ${seconds}s"
  # -artifact_prefix: a crashing input is kept beside the corpus given, else in the working directory.
  status=0
  "$out/$target" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="${2:+$2/$target/}" "$corpus" >"$out/$target.log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|==[0-9]+==ERROR|fuzz_[a-z]+:|SUMMARY|.*Test unit written)' "$out/$target.log" || true
  if [ "$status" != 0 ]; then
    tail -n 40 "$out/$target.log" >&2
    echo "$target failed (exit $status)" >&2
    exit 1
  fi
done
