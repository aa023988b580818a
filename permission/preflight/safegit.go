package preflight

import "strings"

// safeGitSubcommands only read the repository. Hooks do not run for them; an alias
// cannot shadow them (git ignores such aliases); what could still run a program is the
// configuration (core.fsmonitor, diff drivers, pagers), which comes from the person's own
// files: a sandboxed run cannot write .git/config, and a clone does not bring one.
var safeGitSubcommands = set("status", "log", "diff", "show", "rev-parse", "ls-files", "blame",
	"describe", "shortlog", "cat-file", "ls-tree", "grep", "rev-list", "merge-base", "name-rev",
	"show-ref", "for-each-ref", "whatchanged", "diff-tree", "diff-files", "diff-index", "count-objects",
	"version", "branch", "tag", "remote", "config", "reflog", "stash")

// gitUnsafeArgs write files, page through a program or run one, whatever the subcommand.
var gitUnsafeArgs = []string{"--output", "-O", "--open-files-in-pager", "--ext-diff", "--upload-pack",
	"--exec", "--receive-pack"}

// safeGit reports whether `git ARGS` only reads the repository.
func safeGit(args []string) bool {
	i := 0
	for ; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "-C":
			i++ // a directory: reading another repository is still reading
		case v == "--no-pager" || v == "--no-optional-locks" || v == "--no-replace-objects" || v == "--literal-pathspecs":
		case strings.HasPrefix(v, "-"):
			return false // -c, --git-dir, --work-tree, --exec-path, --config-env, --paginate …
		default:
			goto sub
		}
	}
	return false
sub:
	sub, rest := args[i], args[i+1:]
	if !safeGitSubcommands[sub] {
		return false
	}
	for _, v := range rest {
		for _, bad := range gitUnsafeArgs {
			if v == bad || strings.HasPrefix(v, bad+"=") || bad == "-O" && strings.HasPrefix(v, "-O") {
				return false
			}
		}
	}
	pos := positionals(rest, nil)
	cl := call{args: rest}
	switch sub {
	case "branch":
		// Listing only: a name would create a branch; these flags change one.
		return len(pos) == 0 && !cl.hasPrefix("-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move",
			"--copy", "--force", "--set-upstream", "--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog")
	case "tag":
		return (len(pos) == 0 || cl.has("-l", "--list")) && !cl.hasPrefix("-d", "-a", "-s", "-u", "-f", "-m", "-F", "--delete", "--annotate", "--sign", "--force", "--message", "--file", "--edit")
	case "remote":
		return len(pos) == 0 || pos[0] == "get-url" || pos[0] == "-v"
	case "config":
		return cl.has("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--show-origin") &&
			!cl.hasPrefix("--add", "--unset", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e", "--file", "-f", "--blob")
	case "reflog":
		return len(pos) == 0 || pos[0] == "show"
	case "stash":
		return len(pos) > 0 && (pos[0] == "list" || pos[0] == "show")
	}
	return true
}
