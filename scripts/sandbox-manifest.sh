# sandbox-manifest.sh — sourced by sandbox-image.sh and sandbox-test-image.sh: writes the
# image's manifest.json, one entry {name, kind, arch, version, url, sha256, size} per
# artifact, with a url relative to the manifest (or under BASE_URL).
#
#   write_manifest OUT ARCH IMAGE_VERSION KERNEL_VERSION [BASE_URL]

write_manifest() {
	local out=$1 arch=$2 version=$3 kver=$4 base=${5:-}
	artifact() { # name kind version
		local f=$out/$1
		printf '    {"name": "%s", "kind": "%s", "arch": "%s", "version": "%s", "url": "%s", "sha256": "%s", "size": %s}' \
			"$1" "$2" "$arch" "$3" "${base:+${base%/}/}$1" "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")"
	}
	{
		printf '{\n  "name": "airlock-sandbox",\n  "version": "%s",\n  "artifacts": [\n' "$version"
		artifact vmlinuz kernel "$kver"
		printf ',\n'
		artifact initrd.img initrd "$kver"
		printf ',\n'
		artifact rootfs.qcow2 rootfs "$version"
		printf '\n  ]\n}\n'
	} >"$out/manifest.json.tmp"
	mv "$out/manifest.json.tmp" "$out/manifest.json"
}
