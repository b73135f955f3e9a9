#!/usr/bin/env bash
# The container leg: build the image (scripts/container/build.sh), unpack it with umoci and run its
# entrypoint in a chroot as its user (test/container/image.spec.ts). As root. About two minutes
# on a fresh machine (debootstrap), less once build/container/debian-minbase.tar exists.
# Prints "N passed, N failed" and exits non-zero on any failure.
#   npm run test:container      (installs debootstrap, buildah and umoci with apt-get when missing)
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v debootstrap >/dev/null || ! command -v buildah >/dev/null || ! command -v umoci >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap buildah umoci >/dev/null
  else
    echo "the container leg runs as root (debootstrap, umoci unpack, chroot)" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
fi
npx mocha --no-config --node-option import=tsx --reporter test/support/count-reporter.cjs \
  --timeout 600000 --exit 'test/container/*.spec.ts'
