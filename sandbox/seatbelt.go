package sandbox

import (
	"strings"
)

// SeatbeltProfile generates the macOS Seatbelt (SBPL) profile for a policy:
// deny by default, read anywhere (minus hidden paths), write only under the
// writable roots minus the protected paths, network denied unless enabled.
// Run it with `sandbox-exec -p PROFILE -- CMD...`.
//
// p.Unhidden stay readable inside hidden directories: a later rule wins in SBPL, so
// their allow follows the hidden paths' deny.
func SeatbeltProfile(p Policy, hidden []string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-sem)\n(allow ipc-posix-shm-read-data)\n")
	if p.Mode == ModeFullAccess {
		b.WriteString("(allow file-read*)\n(allow file-write*)\n(allow network*)\n(allow ipc-posix-shm*)\n")
		return b.String()
	}
	b.WriteString("(allow file-read*)\n")
	for _, h := range hidden {
		b.WriteString("(deny file-read* file-write* (subpath " + sbplString(h) + "))\n")
	}
	for _, r := range p.Unhidden {
		b.WriteString("(allow file-read* (subpath " + sbplString(r) + "))\n")
	}
	b.WriteString("(allow file-write-data file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
	if p.Mode == ModeWorkspaceWrite {
		for _, root := range p.WritableRoots {
			b.WriteString("(allow file-write*\n  (require-all (subpath " + sbplString(root) + ")")
			for _, prot := range p.Protected {
				if within(prot, root) {
					b.WriteString("\n    (require-not (subpath " + sbplString(prot) + "))")
				}
			}
			for _, n := range p.ProtectedNames {
				if !strings.Contains(n, "/") {
					b.WriteString("\n    (require-not (regex " + sbplRegex(root, n) + "))")
				}
			}
			b.WriteString("))\n")
		}
	}
	if p.Network.On() {
		b.WriteString("(allow network-outbound (remote ip))\n(allow network-inbound (local ip))\n(allow network-bind (local ip))\n(allow system-socket)\n")
	}
	return b.String()
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// sbplRegex matches the protected name as any path component below root.
func sbplRegex(root, name string) string {
	q := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			if strings.ContainsRune(`\.^$|?*+()[]{}"/`, c) {
				b.WriteRune('\\')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return `#"^` + q(root) + `/(.*/)?` + q(name) + `(/.*)?$"`
}
