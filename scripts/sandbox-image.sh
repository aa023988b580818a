#!/usr/bin/env bash
# sandbox-image.sh — build the micro-VM image of Airlock's `sandbox` execution mode from
# Debian packages: a kernel (linux-image-<arch>), an initramfs of busybox with the virtio,
# 9p and ext4 modules (scripts/sandbox-initramfs.sh), and a root filesystem with bash,
# python3 (with pip and venv), nodejs, coreutils, git, curl, wget and Airlock's guest agent
# (cmd/airlock-guest, run as the guest's init). Writes into OUT:
#
#   vmlinuz  initrd.img  rootfs.qcow2  manifest.json
#
# manifest.json lists each artifact {name, kind, arch, version, url, sha256, size} with a
# url relative to the manifest (or under BASE_URL), so `airlock sandbox install --manifest
# OUT/manifest.json` (or the same directory served over HTTP) installs it.
#
# Usage (as root: debootstrap and chroot need it):
#   scripts/sandbox-image.sh                       # or: make sandbox-image
#   OUT=/tmp/img SUITE=bookworm scripts/sandbox-image.sh
#
# Environment:
#   OUT         output directory                      (build/sandbox-image)
#   ARCH        Debian/Go architecture: amd64|arm64    (the host's)
#   SUITE       Debian suite                          (bookworm)
#   MIRROR      Debian mirror; for a bit-for-bit repeatable package set use a snapshot, e.g.
#               http://snapshot.debian.org/archive/debian/20261101T000000Z
#                                                     (http://deb.debian.org/debian)
#   SECURITY_MIRROR  Debian's security archive, for the suite's security updates (and the
#               SUITE-updates of MIRROR); "" leaves the image at the point release
#                                                     (http://deb.debian.org/debian-security)
#   BASE_URL    absolute URL prefix for the manifest's urls ("" = relative file names)
#   VERSION     image version                         (SUITE-<git short commit>)
#   SOURCE_DATE_EPOCH  timestamps in the filesystem   (the commit's time)
#   KEEP_WORK=1 keep the work directory (the unpacked root) for inspection
#
# Needs: debootstrap, e2fsprogs (mkfs.ext4 -d), qemu-utils (qemu-img), go, sha256sum.
# Takes several minutes (downloads ~150 MB of packages); it is never run by the tests.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
. scripts/sandbox-manifest.sh
. scripts/sandbox-initramfs.sh
OUT=${OUT:-$REPO/build/sandbox-image}
ARCH=${ARCH:-$(go env GOARCH)}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SECURITY_MIRROR-http://deb.debian.org/debian-security}
BASE_URL=${BASE_URL:-}
COMMIT=$(git -C "$REPO" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
VERSION=${VERSION:-$SUITE-$COMMIT}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}
ROOTFS_SIZE=${ROOTFS_SIZE:-3G}
# busybox-static only to make the initramfs (taken out of the root before the image is made)
PACKAGES=bash,coreutils,python3,python3-pip,python3-venv,nodejs,git,curl,wget,unzip,xz-utils,ca-certificates,iproute2,kmod,procps,less,linux-image-$ARCH,busybox-static
ROOT_UUID=5a1d0c4e-a1c0-4b1d-9e5a-a1a10cc0ffee # fixed, so two builds make the same superblock

step=0
STEPS=7
say() { step=$((step + 1)); printf '\n==> [%d/%d] %s\n' "$step" "$STEPS" "$*"; }
die() { printf 'sandbox-image: %s\n' "$*" >&2; exit 1; }

# --- checks -------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "run as root (debootstrap and chroot need it): sudo $0"
case "$ARCH" in amd64 | arm64) ;; *) die "ARCH=$ARCH: only amd64 and arm64 are supported" ;; esac
for tool in debootstrap mkfs.ext4 qemu-img go sha256sum; do
	command -v "$tool" >/dev/null || die "$tool not found: apt-get install -y debootstrap e2fsprogs qemu-utils (and Go for the guest agent)"
done
if [ "$ARCH" != "$(dpkg --print-architecture 2>/dev/null || go env GOARCH)" ]; then
	die "building an $ARCH image on another architecture needs qemu-user-static and debootstrap --foreign; not supported by this script yet"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/airlock-sandbox-image.XXXXXX")
ROOT=$WORK/root
cleanup() {
	for m in proc sys dev; do mountpoint -q "$ROOT/$m" 2>/dev/null && umount -l "$ROOT/$m"; done
	if [ "${KEEP_WORK:-}" = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
mkdir -p "$OUT"

# --- 1. guest agent -----------------------------------------------------------------------
say "building the guest agent (cmd/airlock-guest) for linux/$ARCH"
CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH go build -C "$REPO" -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid=" -o "$WORK/airlock-guest" ./cmd/airlock-guest
ls -l "$WORK/airlock-guest"

# --- 2. root filesystem from Debian packages ----------------------------------------------
say "debootstrap $SUITE ($ARCH) from $MIRROR with: ${PACKAGES//,/ }"
debootstrap --arch="$ARCH" --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR" |
	stdbuf -oL sed -u 's/^/    /'

# --- 3. updates and configuration ---------------------------------------------------------
say "security updates, then configuring the guest (agent as init, hostname, fstab)"
# debootstrap takes the point release only: the kernel and the userland get the suite's
# security fixes here (full-upgrade: a kernel fix comes as a new linux-image-* package).
# initramfs-tools need not make initramfs images along the way: ours is made in step 4.
sed -i 's/^update_initramfs=.*/update_initramfs=no/' "$ROOT/etc/initramfs-tools/update-initramfs.conf"
if [ -n "$SECURITY_MIRROR" ]; then
	{
		echo "deb $MIRROR $SUITE main"
		echo "deb $MIRROR $SUITE-updates main"
		echo "deb $SECURITY_MIRROR $SUITE-security main"
	} >"$ROOT/etc/apt/sources.list"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	mount -t proc proc "$ROOT/proc"
	chroot "$ROOT" apt-get -q update | sed 's/^/    /'
	INITRD=No DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get -q -y --no-install-recommends full-upgrade | sed 's/^/    /'
	umount "$ROOT/proc"
	rm -f "$ROOT/etc/resolv.conf"
fi
install -m 0755 "$WORK/airlock-guest" "$ROOT/usr/local/sbin/airlock-guest"
echo airlock-sandbox >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost airlock-sandbox\n::1 localhost\n' >"$ROOT/etc/hosts"
printf '/dev/vda / ext4 rw,relatime 0 1\n' >"$ROOT/etc/fstab"
mkdir -p "$ROOT/workspace"
# The VM is thrown away with the run: pip may install system-wide (PEP 668 would refuse).
printf '[global]\nbreak-system-packages = true\n' >"$ROOT/etc/pip.conf"
: >"$ROOT/etc/machine-id"
chroot "$ROOT" /bin/bash -c 'python3 --version; pip --version; node --version; git --version; curl --version | head -1; bash --version | head -1'
# Caches and logs are not part of the image.
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/* \
	"$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/tmp/* "$ROOT"/var/tmp/*

# --- 4. kernel and initramfs --------------------------------------------------------------
say "taking the kernel out of /boot, making the initramfs (busybox, modules: $GUEST_MODULES)"
KVER=$(basename "$(ls -1 "$ROOT"/boot/vmlinuz-* | sort -V | tail -1)" | sed 's/^vmlinuz-//')
[ -n "$KVER" ] || die "no kernel in $ROOT/boot: did linux-image-$ARCH install?"
cp "$ROOT/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
cp "$ROOT/bin/busybox" "$WORK/busybox"
make_initramfs "$ROOT" "$KVER" "$WORK/busybox" "$OUT/initrd.img" || die "initramfs for $KVER failed"
# The kernel and initramfs are artifacts of their own: the root needs neither.
old=$(chroot "$ROOT" dpkg-query -W -f '${Package}\n' 'linux-image-[0-9]*' | grep -v -- "^linux-image-$KVER\$" || true)
INITRD=No chroot "$ROOT" dpkg --purge busybox-static $old >/dev/null
rm -f "$ROOT"/boot/initrd.img-* "$ROOT"/boot/vmlinuz-*
echo "    kernel $KVER"

# --- 5. ext4 image, then qcow2 ------------------------------------------------------------
say "making the root filesystem image ($ROOTFS_SIZE ext4 → compressed qcow2)"
find "$ROOT" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} + 2>/dev/null || true
E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH mkfs.ext4 -q -F -L airlock-root -U "$ROOT_UUID" \
	-E root_owner=0:0,hash_seed="$ROOT_UUID" -d "$ROOT" "$WORK/rootfs.ext4" "$ROOTFS_SIZE"
qemu-img convert -p -c -f raw -O qcow2 "$WORK/rootfs.ext4" "$OUT/rootfs.qcow2"

# --- 6. manifest --------------------------------------------------------------------------
say "writing $OUT/manifest.json"
write_manifest "$OUT" "$ARCH" "$VERSION" "$KVER" "$BASE_URL"

# --- 7. summary ---------------------------------------------------------------------------
say "done"
ls -l "$OUT"
cat "$OUT/manifest.json"
echo
echo "install it with:  airlock sandbox install --manifest $OUT/manifest.json"
echo "boot it by hand:  qemu-system-x86_64 -m 1024 -nographic -snapshot -kernel $OUT/vmlinuz -initrd $OUT/initrd.img \\"
echo "                    -drive file=$OUT/rootfs.qcow2,if=virtio -append 'console=ttyS0 root=/dev/vda rw init=/usr/local/sbin/airlock-guest'"
