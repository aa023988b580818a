package ops

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The read-only allowlist for verify assertions.
//
// Why these programs: each one inspects state and has no option that writes a file,
// runs another program or changes the target, or those options are refused by its rule
// below. The runner also runs every assertion as read-only (a sandbox that cannot write),
// so the allowlist is the first of two layers, and it is what keeps an assertion from
// becoming a side door for a mutation when the runner is the unconfined [LocalRunner].
//
//   - file readers: cat head tail wc ls stat test grep egrep fgrep diff cmp readlink
//     realpath basename dirname sha256sum sha1sum md5sum du df jq id whoami hostname uname;
//     tail refuses -f/-F/--follow (it would never end).
//   - find, without -exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls.
//   - sqlite3 with -readonly (required), output-format options only, then the database and
//     at most one statement: a SELECT/WITH query or .schema/.tables/.indexes/.dump; refused
//     are other dot-commands (.shell .system .output .once .save .backup .import .load …),
//     -cmd and -init (they run arbitrary dot-commands), ATTACH, and the CLI's file and
//     extension functions (writefile, edit, load_extension, fts3_tokenizer, readfile).
//   - git: log show diff status rev-parse ls-files ls-tree cat-file describe rev-list
//     show-ref for-each-ref blame shortlog; global options only -C, --no-pager,
//     --git-dir=, --work-tree=; refused --output (writes a file), --ext-diff and
//     --textconv (run configured programs) and -c (sets config, e.g. core.fsmonitor).
//   - terraform [-chdir=DIR] show | plan | output | validate | version | providers |
//     state list | state show; plan refuses -out, -state-out, -backup.
//   - kubectl get describe explain version api-resources api-versions cluster-info top
//     logs, `auth can-i`, `config view|get-contexts|current-context`,
//     `rollout status|history`.
//   - aws SERVICE describe-* | list-* | get-* (and `aws s3 ls`), except the get-* that write
//     a local file or print a credential (get-object, get-secret-value,
//     get-login-password, get-session-token, …) and --with-decryption.
//   - gcloud … list | describe.
//   - wrangler (Cloudflare) whoami, `deployments list|status`, `versions list|view`,
//     `kv namespace list`, `kv key list`, `r2 bucket list|info`, `d1 list|info`,
//     `queues list`, `secret list`, `pages project list`, `pages deployment list`
//     (not `tail`, which never ends, nor `kv key get`, which prints a stored value).
//   - doctl (DigitalOcean) … list | ls | get | g (and `account get|ratelimit`), with
//     no word that changes state (create, delete, ssh, kubeconfig save, auth init, …).
//   - runpodctl get … and version.
//   - ssh HOST show … for VyOS and Junos operational mode (also through VyOS's
//     /opt/vyatta/bin/vyatta-op-cmd-wrapper): options only -p PORT, -l USER, -i KEY,
//     -o BatchMode|ConnectTimeout|StrictHostKeyChecking=…, -T -q -4 -6; every remote word
//     plain (letters, digits, . _ - / : @ = , +), since the device's shell reads them again.
//   - curl GET only: -s -S -f -L -I -i (also combined, e.g. -sSf), --silent, --show-error,
//     --fail, --location, --head, --include, --compressed, -m/--max-time N,
//     -H/--header V, -X/--request GET, and http(s) URLs; everything else (-d, -F, -T, -o,
//     -O, -K, -X POST, …) is refused.
//   - dig, host: DNS queries.
//   - systemctl is-active | is-enabled | is-failed | status | show | cat | list-units |
//     list-timers.
//   - ping with -c N (N ≤ 10).
//
// Not allowlisted on purpose: shells, env, xargs, awk, sed, tee, sort (-o), ssh with any
// remote command but `show` (it runs anything remotely), date (-s), file (-C writes), and
// anything not listed.
var readOnlyPrograms = map[string]func(args []string) error{}

func init() {
	for _, p := range []string{"cat", "head", "wc", "ls", "stat", "test", "grep", "egrep", "fgrep", "diff", "cmp",
		"readlink", "realpath", "basename", "dirname", "sha256sum", "sha1sum", "md5sum", "du", "df", "jq",
		"id", "whoami", "hostname", "uname", "dig", "host"} {
		readOnlyPrograms[p] = anyArgs
	}
	readOnlyPrograms["tail"] = checkTail
	readOnlyPrograms["find"] = checkFind
	readOnlyPrograms["sqlite3"] = checkSQLite
	readOnlyPrograms["git"] = checkGit
	readOnlyPrograms["terraform"] = checkTerraform
	readOnlyPrograms["kubectl"] = checkKubectl
	readOnlyPrograms["aws"] = checkAWS
	readOnlyPrograms["gcloud"] = checkGcloud
	readOnlyPrograms["wrangler"] = checkWrangler
	readOnlyPrograms["doctl"] = checkDoctl
	readOnlyPrograms["runpodctl"] = checkRunpodctl
	readOnlyPrograms["ssh"] = checkSSHShow
	readOnlyPrograms["curl"] = checkCurl
	readOnlyPrograms["systemctl"] = checkSystemctl
	readOnlyPrograms["ping"] = checkPing
}

func allowlistedPrograms() []string {
	names := make([]string, 0, len(readOnlyPrograms))
	for n := range readOnlyPrograms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func anyArgs([]string) error { return nil }

func checkTail(args []string) error {
	for _, a := range args {
		if a == "--follow" || strings.HasPrefix(a, "--follow=") || a == "--retry" ||
			strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "fF") {
			return fmt.Errorf("%s would follow the file forever: refused", a)
		}
	}
	return nil
}

func checkFind(args []string) error {
	for _, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return fmt.Errorf("%s runs a program, deletes or writes a file: refused", a)
		}
	}
	return nil
}

var sqliteFormatOptions = []string{"-readonly", "-json", "-csv", "-header", "-noheader", "-line", "-list", "-column",
	"-box", "-markdown", "-table", "-html", "-quote", "-batch", "-bail", "-tabs", "-nofollow", "-safe"}

var sqliteForbiddenFunctions = []string{"writefile", "edit", "load_extension", "fts3_tokenizer", "readfile", "attach", "detach",
	"pragma", "vacuum", "sqlar", "zipfile", "shell", "system"}

func checkSQLite(args []string) error {
	readonly := false
	var rest []string
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			rest = args[i:]
			break
		}
		if !slices.Contains(sqliteFormatOptions, a) {
			return fmt.Errorf("option %s is refused (allowed: %s)", a, strings.Join(sqliteFormatOptions, " "))
		}
		if a == "-readonly" {
			readonly = true
		}
	}
	if !readonly {
		return errors.New("needs -readonly (e.g. `sqlite3 -readonly db.sqlite .schema`)")
	}
	if len(rest) == 0 {
		return errors.New("needs a database file")
	}
	if rest[0] == "" || strings.HasPrefix(rest[0], "file:") {
		return errors.New("database must be a plain file path (URI filenames are refused)")
	}
	switch len(rest) {
	case 1:
		return errors.New("needs one statement after the database (sqlite3 would otherwise read stdin)")
	case 2:
	default:
		return errors.New("takes one statement after the database: use one assertion per statement")
	}
	stmt := strings.TrimSpace(rest[1])
	lower := strings.ToLower(stmt)
	if strings.HasPrefix(lower, ".") {
		fields := strings.Fields(lower)
		switch fields[0] {
		case ".schema", ".tables", ".indexes", ".indices", ".dump":
			return nil
		}
		return fmt.Errorf("dot-command %s is refused (allowed: .schema .tables .indexes .dump)", fields[0])
	}
	if !strings.HasPrefix(lower, "select") && !strings.HasPrefix(lower, "with") {
		return errors.New("only SELECT (or WITH … SELECT) statements and .schema/.tables/.indexes/.dump are allowed")
	}
	for _, w := range sqlWords(lower) {
		if slices.Contains(sqliteForbiddenFunctions, w) {
			return fmt.Errorf("%q is refused in a read-only assertion", w)
		}
		switch w {
		case "insert", "update", "delete", "replace", "create", "drop", "alter":
			return fmt.Errorf("%q is a write: only reads are allowed", w)
		}
	}
	return nil
}

// sqlWords returns the identifier-like words of an SQL statement outside string literals.
func sqlWords(s string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			flush()
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return words
			}
			i += j + 1
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_':
			cur.WriteByte(c)
		default:
			// Quoted identifiers ("x", [x], `x`) count as words too: strip the quotes.
			flush()
		}
	}
	flush()
	return words
}

var gitReadSubcommands = []string{"log", "show", "diff", "status", "rev-parse", "ls-files", "ls-tree", "cat-file", "describe",
	"rev-list", "show-ref", "for-each-ref", "blame", "shortlog"}

func checkGit(args []string) error {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch {
		case a == "-C":
			i++ // the directory
		case a == "--no-pager", strings.HasPrefix(a, "--git-dir="), strings.HasPrefix(a, "--work-tree="):
		default:
			return fmt.Errorf("global option %s is refused (allowed: -C DIR, --no-pager, --git-dir=, --work-tree=)", a)
		}
	}
	if i >= len(args) {
		return errors.New("needs a subcommand")
	}
	if !slices.Contains(gitReadSubcommands, args[i]) {
		return fmt.Errorf("subcommand %q is refused (allowed: %s)", args[i], strings.Join(gitReadSubcommands, " "))
	}
	for _, a := range args[i+1:] {
		if a == "--output" || strings.HasPrefix(a, "--output=") || a == "--ext-diff" || a == "--textconv" {
			return fmt.Errorf("%s writes a file or runs a configured program: refused", a)
		}
	}
	return nil
}

func checkTerraform(args []string) error {
	if len(args) > 0 && strings.HasPrefix(args[0], "-chdir=") {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("needs a subcommand")
	}
	switch args[0] {
	case "show", "output", "validate", "version", "providers":
		return nil
	case "state":
		if len(args) > 1 && (args[1] == "list" || args[1] == "show") {
			return nil
		}
		return errors.New("only `state list` and `state show` are allowed")
	case "plan":
		for _, a := range args[1:] {
			for _, bad := range []string{"-out", "-state-out", "-backup"} {
				if a == bad || strings.HasPrefix(a, bad+"=") {
					return fmt.Errorf("plan %s writes a file: refused", bad)
				}
			}
		}
		return nil
	}
	return fmt.Errorf("subcommand %q is refused (allowed: show plan output validate version providers, state list|show)", args[0])
}

// positionals returns the non-option words of args; valueFlags lists options that take
// the next word as their value (unless written --opt=value).
func positionals(args []string, valueFlags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if !strings.Contains(a, "=") && slices.Contains(valueFlags, a) {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func checkKubectl(args []string) error {
	pos := positionals(args, "-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user", "-s", "--server",
		"-l", "--selector", "-o", "--output", "--as", "--as-group", "-c", "--container", "--field-selector", "--request-timeout")
	if len(pos) == 0 {
		return errors.New("needs a verb")
	}
	switch pos[0] {
	case "get", "describe", "explain", "version", "api-resources", "api-versions", "cluster-info", "top", "logs":
		return nil
	case "auth":
		if len(pos) > 1 && pos[1] == "can-i" {
			return nil
		}
	case "config":
		if len(pos) > 1 && slices.Contains([]string{"view", "get-contexts", "current-context"}, pos[1]) {
			return nil
		}
	case "rollout":
		if len(pos) > 1 && (pos[1] == "status" || pos[1] == "history") {
			return nil
		}
	}
	return fmt.Errorf("verb %q is refused (allowed: get describe explain version api-resources api-versions cluster-info top logs, auth can-i, config view, rollout status|history)", strings.Join(pos[:min(2, len(pos))], " "))
}

var awsRefusedOperations = []string{"get-object", "get-object-torrent", "get-job-output", "get-media", "get-secret-value",
	"get-login-password", "get-login", "get-authorization-token", "get-session-token", "get-federation-token",
	"get-credentials-for-identity", "get-password-data", "get-parameter", "get-parameters", "get-parameters-by-path"}

func checkAWS(args []string) error {
	for _, a := range args {
		if a == "--with-decryption" {
			return errors.New("--with-decryption would print a secret: refused")
		}
	}
	pos := positionals(args, "--region", "--profile", "--output", "--query", "--endpoint-url", "--color", "--cli-read-timeout",
		"--cli-connect-timeout", "--ca-bundle", "--max-items", "--page-size", "--starting-token", "--filters")
	if len(pos) < 2 {
		return errors.New("needs a service and an operation, e.g. `aws ec2 describe-instances`")
	}
	service, op := pos[0], pos[1]
	if service == "s3" {
		if op == "ls" {
			return nil
		}
		return fmt.Errorf("`aws s3 %s` is refused (only `aws s3 ls`)", op)
	}
	if slices.Contains(awsRefusedOperations, op) {
		return fmt.Errorf("operation %s writes a local file or prints a credential: refused", op)
	}
	if strings.HasPrefix(op, "describe-") || strings.HasPrefix(op, "list-") || strings.HasPrefix(op, "get-") {
		return nil
	}
	return fmt.Errorf("operation %q is refused (only describe-*, list-*, get-*)", op)
}

var gcloudMutatingVerbs = []string{"create", "delete", "update", "set", "add", "remove", "reset", "start", "stop", "deploy",
	"ssh", "scp", "import", "export", "patch", "resize", "move", "attach", "detach", "enable", "disable", "apply", "run",
	"execute", "restore", "rollback", "submit", "cancel", "suspend", "resume", "add-iam-policy-binding",
	"remove-iam-policy-binding", "set-iam-policy"}

func checkGcloud(args []string) error {
	pos := positionals(args, "--project", "--format", "--filter", "--region", "--zone", "--limit", "--account", "--configuration")
	if len(pos) == 0 {
		return errors.New("needs a command")
	}
	read := false
	for _, p := range pos {
		if slices.Contains(gcloudMutatingVerbs, p) {
			return fmt.Errorf("verb %q changes state: refused (only `… list` and `… describe`)", p)
		}
		read = read || p == "list" || p == "describe"
	}
	if !read {
		return fmt.Errorf("command %q is refused (only `… list` and `… describe`)", strings.Join(pos, " "))
	}
	return nil
}

// wranglerReads are the read-only wrangler commands, as their leading words.
var wranglerReads = [][]string{{"whoami"}, {"deployments", "list"}, {"deployments", "status"}, {"versions", "list"},
	{"versions", "view"}, {"kv", "namespace", "list"}, {"kv", "key", "list"}, {"r2", "bucket", "list"}, {"r2", "bucket", "info"},
	{"d1", "list"}, {"d1", "info"}, {"queues", "list"}, {"secret", "list"}, {"pages", "project", "list"}, {"pages", "deployment", "list"}}

func checkWrangler(args []string) error {
	pos := positionals(args, "-c", "--config", "-e", "--env", "--name", "--namespace-id", "--binding", "--prefix", "--project-name")
	for _, read := range wranglerReads {
		if len(pos) >= len(read) && slices.Equal(pos[:len(read)], read) {
			return nil
		}
	}
	var names []string
	for _, read := range wranglerReads {
		names = append(names, strings.Join(read, " "))
	}
	return fmt.Errorf("command %q is refused (allowed: %s)", strings.Join(pos[:min(3, len(pos))], " "), strings.Join(names, ", "))
}

// doctlChanges are doctl words that change state, run a program or write a file.
var doctlChanges = []string{"create", "c", "delete", "d", "del", "rm", "update", "u", "ssh", "save", "init", "switch",
	"remove", "add", "tag", "untag", "power-on", "power-off", "power-cycle", "shutdown", "reboot", "rebuild", "resize",
	"restore", "snapshot", "attach", "detach", "assign", "unassign", "import", "apply", "deploy", "login", "logout",
	"connect", "run", "exec", "console", "upgrade", "recycle", "flush", "purge", "reset", "enable", "disable", "propose"}

func checkDoctl(args []string) error {
	pos := positionals(args, "-t", "--access-token", "-u", "--api-url", "-c", "--config", "--context", "-o", "--output",
		"--format", "--region", "--tag-name", "--type")
	if len(pos) == 0 {
		return errors.New("needs a command, e.g. `doctl compute droplet list`")
	}
	read := false
	for _, p := range pos {
		if slices.Contains(doctlChanges, p) || strings.HasPrefix(p, "add-") || strings.HasPrefix(p, "remove-") {
			return fmt.Errorf("%q changes state: refused (only `… list` and `… get`)", p)
		}
		read = read || p == "list" || p == "ls" || p == "get" || p == "g" || p == "ratelimit"
	}
	if !read {
		return fmt.Errorf("command %q is refused (only `… list` and `… get`)", strings.Join(pos, " "))
	}
	return nil
}

func checkRunpodctl(args []string) error {
	pos := positionals(args)
	if len(pos) > 0 && (pos[0] == "get" || pos[0] == "version") {
		return nil
	}
	return errors.New("only `runpodctl get …` and `runpodctl version` are allowed")
}

var sshShowOptions = []string{"BatchMode=", "ConnectTimeout=", "StrictHostKeyChecking="}

// sshShowOption reports whether an -o value is one of sshShowOptions with a plain value
// (ssh would read more after a space, as in "BatchMode=yes ProxyCommand=…").
func sshShowOption(v string) bool {
	for _, o := range sshShowOptions {
		if val, ok := strings.CutPrefix(v, o); ok && val != "" &&
			strings.Trim(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" {
			return true
		}
	}
	return false
}

// checkSSHShow allows one operational-mode `show` on a network device. ssh hands the
// remote words to the device's shell as one line, so each must be a plain word.
func checkSSHShow(args []string) error {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch a := args[i]; a {
		case "-T", "-q", "-4", "-6":
		case "-p", "-l", "-i", "-o":
			i++
			if i >= len(args) {
				return fmt.Errorf("%s needs a value", a)
			}
			if a == "-o" && !sshShowOption(args[i]) {
				return fmt.Errorf("-o %s is refused (allowed: -o %s…, with a plain value)", args[i], strings.Join(sshShowOptions, "…, -o "))
			}
		default:
			return fmt.Errorf("option %s is refused (allowed: -p PORT -l USER -i KEY -o BatchMode=… -T -q -4 -6)", a)
		}
	}
	if i >= len(args) {
		return errors.New("needs a host and a `show …` command")
	}
	remote := args[i+1:]
	if len(remote) > 0 && remote[0] == "/opt/vyatta/bin/vyatta-op-cmd-wrapper" {
		remote = remote[1:]
	}
	if len(remote) < 2 || remote[0] != "show" {
		return errors.New("only `ssh HOST show …` (a device's operational mode) is allowed")
	}
	for _, w := range remote {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@=,+") != "" {
			return fmt.Errorf("remote word %q is refused: only letters, digits and . _ - / : @ = , + (the device's shell reads it again)", w)
		}
	}
	if strings.HasPrefix(args[i], "-") || args[i] == "" {
		return fmt.Errorf("host %q is not a host", args[i])
	}
	return nil
}

func checkCurl(args []string) error {
	urls := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--silent", a == "--show-error", a == "--fail", a == "--location", a == "--head", a == "--include", a == "--compressed":
		case a == "-m", a == "--max-time":
			i++
			if i >= len(args) {
				return fmt.Errorf("%s needs a number", a)
			}
			if _, err := strconv.ParseFloat(args[i], 64); err != nil {
				return fmt.Errorf("%s needs a number, not %q", a, args[i])
			}
		case strings.HasPrefix(a, "--max-time="):
		case a == "-H", a == "--header":
			i++
			if i >= len(args) {
				return fmt.Errorf("%s needs a value", a)
			}
		case a == "-X", a == "--request":
			i++
			if i >= len(args) || args[i] != "GET" {
				return errors.New("only -X GET is allowed: an assertion never changes the target")
			}
		case strings.HasPrefix(a, "--request="):
			if a != "--request=GET" {
				return errors.New("only GET requests are allowed")
			}
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 1:
			for _, c := range a[1:] {
				if !strings.ContainsRune("sSfLIi", c) {
					return fmt.Errorf("option -%c is refused (allowed: -s -S -f -L -I -i -m N -H V -X GET)", c)
				}
			}
		case strings.HasPrefix(a, "-"):
			return fmt.Errorf("option %s is refused (allowed: --silent --show-error --fail --location --head --include --compressed --max-time --header --request GET)", a)
		default:
			u, err := url.Parse(a)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%q is not an http(s) URL", a)
			}
			urls++
		}
	}
	if urls == 0 {
		return errors.New("needs an http(s) URL")
	}
	return nil
}

func checkSystemctl(args []string) error {
	pos := positionals(args, "-p", "--property", "-H", "--host", "-M", "--machine", "-n", "--lines", "-t", "--type", "--state")
	if len(pos) == 0 {
		return errors.New("needs a verb")
	}
	switch pos[0] {
	case "is-active", "is-enabled", "is-failed", "status", "show", "cat", "list-units", "list-timers":
		return nil
	}
	return fmt.Errorf("verb %q is refused (allowed: is-active is-enabled is-failed status show cat list-units list-timers)", pos[0])
}

func checkPing(args []string) error {
	count := -1
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" && i+1 < len(args) {
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				return fmt.Errorf("-c needs a number, not %q", args[i+1])
			}
			count = n
			i++
		} else if strings.HasPrefix(args[i], "-") && args[i] != "-q" && args[i] != "-n" && args[i] != "-4" && args[i] != "-6" {
			return fmt.Errorf("option %s is refused (allowed: -c N -q -n -4 -6)", args[i])
		}
	}
	if count < 1 || count > 10 {
		return errors.New("needs -c N with N between 1 and 10")
	}
	return nil
}
