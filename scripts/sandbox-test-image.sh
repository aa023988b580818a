#!/usr/bin/env bash
# sandbox-test-image.sh — a quick micro-VM image for the tests (about a minute), so CI boots
# real VMs instead of skipping them. Same artifacts and manifest as sandbox-image.sh
# (vmlinuz, initrd.img, rootfs.qcow2, manifest.json) and the same userland the tests expect
# (bash, python3, node, git, ip from Debian's packages, Airlock's guest agent as init), but
# built without debootstrap or a chroot:
#
#   * the packages and their dependencies are downloaded by apt against an empty package
#     state (so the host's installed versions do not matter) and unpacked with dpkg-deb -x;
#     no maintainer script runs, which these packages do not need to work;
#   * the kernel is Debian's linux-image-<arch>; the initramfs is the same as
#     sandbox-image.sh's (scripts/sandbox-initramfs.sh: busybox and the guest's modules);
#   * the root filesystem is an uncompressed qcow2 (fast to make, larger on disk).
#
# Usage (as root: the unpacked files must belong to root):
#   scripts/sandbox-test-image.sh              # or: make sandbox-test-image
#   OUT=/tmp/img scripts/sandbox-test-image.sh
#
# Environment: OUT (build/sandbox-test-image), ARCH (the host's), PACKAGES (the userland).
# Needs: apt-get, dpkg-deb, mkfs.ext4 (e2fsprogs), qemu-img (qemu-utils), go, sha256sum.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
. scripts/sandbox-manifest.sh
. scripts/sandbox-initramfs.sh
OUT=${OUT:-$REPO/build/sandbox-test-image}
ARCH=${ARCH:-$(go env GOARCH)}
PACKAGES=${PACKAGES:-bash coreutils python3 nodejs git iproute2 ca-certificates}
COMMIT=$(git -C "$REPO" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
VERSION=test-$COMMIT

step=0
STEPS=6
say() { step=$((step + 1)); printf '==> [%d/%d] %s\n' "$step" "$STEPS" "$*"; }
die() { printf 'sandbox-test-image: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (the image's files must belong to root): sudo $0"
[ "$ARCH" = "$(dpkg --print-architecture)" ] || die "ARCH=$ARCH differs from this machine's $(dpkg --print-architecture): not supported"
for tool in apt-get dpkg-deb mkfs.ext4 qemu-img go sha256sum; do
	command -v "$tool" >/dev/null || die "$tool not found: apt-get install -y e2fsprogs qemu-utils (and Go for the guest agent)"
done

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/airlock-test-image.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/root KERNEL=$WORK/kernel DEBS=$WORK/apt/archives
mkdir -p "$DEBS/partial" "$ROOT" "$KERNEL" "$OUT"

# apt against an empty dpkg state: it resolves the whole dependency closure from the
# archive, whatever the host has installed (or installed from elsewhere).
: >"$WORK/status"
apt_() {
	apt-get -q -o Dir::State::status="$WORK/status" -o Dir::Cache="$WORK/apt" \
		-o Dir::Cache::archives="$DEBS" -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
		-o APT::Install-Recommends=false -o APT::Architecture="$ARCH" "$@"
}
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
	echo "    no apt package lists yet: apt-get update"
	apt-get update -q
fi

say "downloading $PACKAGES, busybox-static and linux-image-$ARCH with their dependencies"
apt_ install --download-only -y $PACKAGES busybox-static linux-image-$ARCH | grep -E '^(Fetched|Need to get)' || true
kdeb=$(ls "$DEBS"/linux-image-[0-9]*_"$ARCH".deb 2>/dev/null | sort -V | tail -1)
[ -n "$kdeb" ] || die "no linux-image-*-$ARCH package was downloaded"

say "unpacking the userland ($(ls "$DEBS"/*.deb | wc -l) packages)"
# Merged /usr as on Debian 12: /bin, /sbin, /lib* are links into /usr.
mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64} "$ROOT"/{etc,root,tmp,proc,sys,dev,run,workspace,usr/local/sbin}
for d in bin sbin lib lib64; do ln -s usr/$d "$ROOT/$d"; done
for deb in "$DEBS"/*.deb; do
	case $(basename "$deb") in
	linux-image-* | initramfs-tools* | klibc-utils_* | libklibc_* | busybox-static_* | dracut* | tiny-initramfs* | udev_*) ;;
	# (dpkg-deb -x would replace the /bin link with a directory; tar keeps it)
	*) dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$ROOT" ;;
	esac
done
# What maintainer scripts would have made: /bin/sh, the users, the library cache.
[ -e "$ROOT/usr/bin/sh" ] || ln -s bash "$ROOT/usr/bin/sh"
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' >"$ROOT/etc/group"
echo airlock-sandbox >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost airlock-sandbox\n::1 localhost\n' >"$ROOT/etc/hosts"
ldconfig -r "$ROOT"
chmod 1777 "$ROOT/tmp"
rm -rf "$ROOT"/usr/share/{doc,man,info,locale}

say "building the guest agent (cmd/airlock-guest) for linux/$ARCH"
CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH go build -C "$REPO" -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid=" -o "$ROOT/usr/local/sbin/airlock-guest" ./cmd/airlock-guest

say "kernel and initramfs (busybox, modules: $GUEST_MODULES)"
dpkg-deb -x "$kdeb" "$KERNEL"
KVER=$(ls "$KERNEL/lib/modules" | sort -V | tail -1)
cp "$KERNEL/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
dpkg-deb -x "$(ls "$DEBS"/busybox-static_*.deb)" "$WORK/busybox"
BB=$WORK/busybox/bin/busybox
make_initramfs "$KERNEL" "$KVER" "$BB" "$OUT/initrd.img"

say "root filesystem ($(du -sm "$ROOT" | cut -f1) MB) → ext4 → qcow2"
size=$(($(du -sm "$ROOT" | cut -f1) * 12 / 10 + 256))
mkfs.ext4 -q -F -L airlock-root -E root_owner=0:0 -d "$ROOT" "$WORK/rootfs.ext4" "${size}M"
qemu-img convert -f raw -O qcow2 "$WORK/rootfs.ext4" "$OUT/rootfs.qcow2"

say "manifest"
write_manifest "$OUT" "$ARCH" "$VERSION" "$KVER"
ls -l "$OUT"
