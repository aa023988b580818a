package preflight

import (
	"path"
	"strings"
)

// criticalFiles are system files whose overwrite locks people out or hands the machine
// over (accounts, sudo, mounts, the SSH daemon, the loader).
var criticalFiles = set("/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow", "/etc/sudoers",
	"/etc/fstab", "/etc/ssh/sshd_config", "/etc/ld.so.preload", "/etc/hosts", "/etc/resolv.conf",
	"/etc/crontab", "/etc/environment", "/etc/profile", "/etc/bash.bashrc")

// criticalDirs hold files of the same kind; anything written under them counts.
var criticalDirs = []string{"/etc/sudoers.d/", "/etc/pam.d/", "/etc/cron.d/", "/etc/systemd/system/", "/boot/", "/etc/ssh/sshd_config.d/"}

// criticalFile says which system file a write target is, when it is one.
func criticalFile(t string) (string, bool) {
	if !strings.HasPrefix(t, "/") {
		return "", false
	}
	c := path.Clean(t)
	if criticalFiles[c] {
		return c, true
	}
	for _, d := range criticalDirs {
		if strings.HasPrefix(c+"/", d) {
			return c, true
		}
	}
	return "", false
}

// criticalProcesses are what killall/pkill must not stop without a person's say.
var criticalProcesses = set("init", "systemd", "sshd", "dbus-daemon", "dbus-broker", "Xorg", "Xwayland",
	"gdm", "gdm3", "sddm", "lightdm", "gnome-shell", "plasmashell", "kwin_wayland", "NetworkManager",
	"systemd-logind", "systemd-journald", "login", "getty", "agetty", "cron", "polkitd", "containerd", "dockerd")

var partitioners = set("fdisk", "sfdisk", "gdisk", "sgdisk", "cgdisk", "cfdisk", "parted", "partx")

// system checks what changes the machine itself (accounts, partitions, critical system
// files, its daemons) and withdrawals from package registries. (HTTP DELETEs count only
// against control planes: cloud.go.)
func (a *analyzer) system(cl call) {
	p := cl.prog
	switch {
	case partitioners[p]:
		if cl.has("-l", "--list", "--help", "-V", "--version") || cl.has("print") {
			return
		}
		for _, t := range positionals(cl.args, set("-s", "--script", "-a", "--align")) {
			if dev, ok := diskDevice(t); ok {
				a.add(CategorySystem, p+" changes the partition table of "+dev, cl.src)
				return
			}
		}
	case p == "userdel" || p == "deluser" || p == "groupdel" || p == "delgroup":
		a.add(CategorySystem, p+" deletes an account of this machine", cl.src)
	case p == "passwd" && (cl.has("--delete", "--lock", "--expire") || cl.shortFlag("dle")):
		a.add(CategorySystem, "passwd removes, locks or expires an account's password", cl.src)
	case p == "chpasswd":
		a.add(CategorySystem, "chpasswd sets the passwords of accounts", cl.src)
	case p == "killall" || p == "pkill" || p == "killall5":
		a.killByName(cl)
	case p == "mv":
		pos := positionals(cl.args, set("-t", "--target-directory", "-S", "--suffix"))
		if len(pos) >= 2 {
			for _, src := range pos[:len(pos)-1] {
				if what, ok := a.dangerousTarget(src); ok {
					a.add(CategoryDestructivePath, "mv moves "+what+" away", cl.src)
					return
				}
			}
		}
	case p == "sed" || p == "perl":
		if !cl.hasPrefix("-i", "--in-place") {
			return
		}
		for _, t := range cl.args {
			if f, ok := criticalFile(t); ok {
				a.add(CategorySystem, p+" -i rewrites the system file "+f, cl.src)
				return
			}
		}
	case p == "npm" || p == "pnpm" || p == "yarn":
		if pos := positionals(cl.args, nil); len(pos) > 0 && pos[0] == "unpublish" {
			a.add(CategoryDataLoss, p+" unpublish removes a published package version for everyone", cl.src)
		}
	case p == "cargo" || p == "gem":
		if pos := positionals(cl.args, nil); len(pos) > 0 && pos[0] == "yank" && !cl.has("--undo") {
			a.add(CategoryDataLoss, p+" yank withdraws a published version for everyone", cl.src)
		}
	}
	for _, t := range writtenOperands(cl) {
		if f, ok := criticalFile(t); ok {
			a.add(CategorySystem, p+" overwrites the system file "+f, cl.src)
			return
		}
	}
}

// writtenOperands returns the operands a file-writing program writes: every file of tee
// and truncate, dd's of=, the last operand of cp, mv, install, ln, rsync and scp.
func writtenOperands(cl call) []string {
	p := cl.prog
	switch p {
	case "tee", "truncate", "dd", "cp", "mv", "install", "ln", "rsync", "scp":
	default:
		return nil
	}
	targets := positionals(cl.args, set("-t", "--target-directory", "-m", "--mode", "-o", "--owner", "-g", "--group",
		"-S", "--suffix", "-s", "--size", "-e", "--rsh"))
	if p == "dd" {
		var out []string
		for _, t := range targets {
			if v, ok := strings.CutPrefix(t, "of="); ok {
				out = append(out, v)
			}
		}
		return out
	}
	if p == "tee" || p == "truncate" || len(targets) == 0 {
		return targets
	}
	if p == "rsync" || p == "scp" { // their -t is not a target directory
		return targets[len(targets)-1:]
	}
	for i, v := range cl.args {
		if (v == "-t" || v == "--target-directory") && i+1 < len(cl.args) {
			return cl.args[i+1 : i+2] // cp -t DIR FILE…
		}
		if d, ok := strings.CutPrefix(v, "--target-directory="); ok {
			return []string{d}
		}
	}
	return targets[len(targets)-1:]
}

// killByName flags killall/pkill of root's processes or of the system's daemons.
func (a *analyzer) killByName(cl call) {
	if cl.prog == "killall5" {
		a.add(CategorySystem, "killall5 signals every process, stopping the system", cl.src)
		return
	}
	for i, v := range cl.args {
		if (v == "-u" || v == "--user" || v == "-U" || v == "--uid" || v == "--euid") && i+1 < len(cl.args) && (cl.args[i+1] == "root" || cl.args[i+1] == "0") ||
			v == "--user=root" || v == "-uroot" {
			a.add(CategorySystem, cl.prog+" signals every process of root", cl.src)
			return
		}
	}
	for _, t := range positionals(cl.args, set("-s", "--signal", "-u", "--user", "-U", "--uid", "-g", "--pgroup", "-G", "--group", "-P", "--parent", "-t", "--terminal", "-o", "--older-than", "-y", "--younger-than", "--ns", "--nslist")) {
		if criticalProcesses[t] {
			a.add(CategorySystem, cl.prog+" stops the system process "+t, cl.src)
			return
		}
	}
}
