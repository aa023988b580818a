# sandbox-initramfs.sh — sourced by sandbox-image.sh and sandbox-test-image.sh: makes the
# micro-VM's initramfs, busybox plus the modules the guest needs (and what they depend
# on) and a small /init that loads them, mounts the root disk and switch_roots to the
# guest agent. Smaller and faster to boot than initramfs-tools' (under TCG every
# megabyte unpacked and every script run counts).
#
#   make_initramfs MODROOT KVER BUSYBOX OUT
#
# MODROOT holds lib/modules/KVER (a kernel package unpacked, or the guest's root), BUSYBOX
# is a static busybox, OUT the gzip'd cpio to write.

# crc32c_generic: ext4 needs it (a softdep, which modules.dep does not list).
GUEST_MODULES="virtio_pci virtio_blk virtio_console virtio_net 9pnet_virtio 9p crc32c_generic ext4"

make_initramfs() {
	local modroot=$1 kver=$2 bb=$3 out=$4
	local dir
	dir=$(mktemp -d "${TMPDIR:-/var/tmp}/airlock-initramfs.XXXXXX")
	local mods=$modroot/lib/modules/$kver
	mkdir -p "$dir"/{bin,dev,proc,sys,newroot,lib/modules/"$kver"}
	cp "$bb" "$dir/bin/busybox"
	ln -s busybox "$dir/bin/sh"
	cp "$mods"/modules.order "$mods"/modules.builtin* "$dir/lib/modules/$kver/" 2>/dev/null || true
	[ -f "$mods/modules.dep" ] || "$bb" depmod -b "$modroot" "$kver"
	# Each module with everything it depends on, as modules.dep of the whole tree says.
	local -A seen=()
	need() {
		local rel dep
		rel=$(awk -v m="/$1.ko:" 'index($0, m) { sub(/:.*/, ""); print; exit }' "$mods/modules.dep")
		[ -n "$rel" ] || { echo "initramfs: module $1 not found in $kver" >&2; return 1; }
		[ -n "${seen[$rel]:-}" ] && return 0
		seen[$rel]=1
		mkdir -p "$dir/lib/modules/$kver/$(dirname "$rel")"
		cp "$mods/$rel" "$dir/lib/modules/$kver/$rel"
		for dep in $(awk -v m="$rel:" 'index($0, m) == 1 { sub(/^[^:]*:/, ""); print; exit }' "$mods/modules.dep"); do
			need "$(basename "$dep" .ko)" || return 1
		done
	}
	local m
	for m in $GUEST_MODULES; do need "$m" || { rm -rf "$dir"; return 1; }; done
	"$bb" depmod -b "$dir" "$kver"
	cat >"$dir/init" <<EOF
#!/bin/sh
# Airlock's micro-VM: load the guest's modules, mount the root disk, hand over to its init.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $GUEST_MODULES; do modprobe \$m || echo "initramfs: modprobe \$m failed"; done
root=/dev/vda init=/sbin/init
for a in \$(cat /proc/cmdline); do
	case \$a in root=*) root=\${a#root=} ;; init=*) init=\${a#init=} ;; esac
done
i=0
while [ ! -b "\$root" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
mount -t ext4 -o rw "\$root" /newroot || { echo "initramfs: cannot mount \$root"; poweroff -f; }
for d in dev proc sys; do mount --move /\$d /newroot/\$d; done
exec switch_root /newroot "\$init"
EOF
	chmod 0755 "$dir/init"
	# Fixed timestamps, sorted names: the same inputs make the same bytes.
	find "$dir" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
	(cd "$dir" && find . | LC_ALL=C sort | "$bb" cpio -o -H newc 2>/dev/null) | gzip -n -6 >"$out"
	rm -rf "$dir"
}
