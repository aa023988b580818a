package preflight

import (
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// cloud checks infrastructure mutations: terraform, cloud CLIs, kubectl, wrangler,
// remote commits over ssh, and control-plane HTTP calls.
func (a *analyzer) cloud(cl call, depth int) {
	switch p := cl.prog; {
	case p == "terraform" || p == "tofu" || p == "terragrunt":
		a.terraform(cl)
	case p == "aws" || p == "awslocal":
		a.aws(cl)
	case cloudCLIs[p]:
		pos := positionals(cl.args, cloudValued)
		for _, v := range pos {
			if cloudVerbs[v] || (p == "doctl" && (v == "d" || v == "del")) {
				a.add(CategoryCloud, p+" "+v+" deletes cloud resources", cl.src)
				return
			}
		}
	case p == "gsutil":
		if pos := positionals(cl.args, set("-o", "-h", "-p", "-u")); len(pos) > 0 && (pos[0] == "rm" || pos[0] == "rb") {
			a.add(CategoryCloud, "gsutil "+pos[0]+" deletes cloud storage", cl.src)
		}
	case p == "pulumi" || p == "cdk" || p == "cdktf" || p == "serverless" || p == "sls" || p == "sst" || p == "heroku" || p == "vercel" || p == "netlify" || p == "flyctl" || p == "fly":
		for _, v := range positionals(cl.args, cloudValued) {
			switch v {
			case "destroy", "remove", "rm", "delete", "apps:destroy", "sites:delete":
				if !cl.has("--preview-only", "--dry-run") {
					a.add(CategoryCloud, p+" "+v+" deletes deployed infrastructure", cl.src)
				}
				return
			}
		}
	case p == "kubectl" || p == "oc" || p == "kubecolor" || p == "k3s" || p == "microk8s":
		a.kubectl(cl)
	case p == "helm":
		if pos := positionals(cl.args, kubeValued); len(pos) > 0 {
			switch pos[0] {
			case "uninstall", "delete", "del", "un":
				if !cl.has("--dry-run") {
					a.add(CategoryCloud, "helm "+pos[0]+" removes a release from the cluster", cl.src)
				}
			}
		}
	case p == "wrangler":
		pos := positionals(cl.args, set("-c", "--config", "-e", "--env", "--name"))
		for _, v := range pos {
			if v == "delete" || v == "rollback" {
				a.add(CategoryCloud, "wrangler "+v+" changes or removes a live Cloudflare deployment", cl.src)
				return
			}
		}
		a.sql(cl) // wrangler d1 execute --command "DROP TABLE …"
	case p == "ssh":
		if _, remote := sshRemote(cl.args); remote != "" {
			if r, ok := remoteCommit(remote); ok {
				a.add(CategoryCloud, r, cl.src)
			} else if r, ok := remoteDeviceOp(remote); ok {
				a.add(CategoryCloud, r, cl.src)
			}
		}
	case p == "curl":
		a.curl(cl)
	case p == "wget":
		method := ""
		for _, v := range cl.args {
			switch {
			case strings.HasPrefix(v, "--method="):
				method = strings.ToUpper(strings.TrimPrefix(v, "--method="))
			case strings.HasPrefix(v, "--post-data") || strings.HasPrefix(v, "--post-file"):
				if method == "" {
					method = "POST"
				}
			}
		}
		a.controlPlane(cl, method)
	case p == "http" || p == "https" || p == "xh" || p == "xhs":
		method := ""
		for _, v := range positionals(cl.args, set("-a", "--auth", "-A", "--auth-type", "-o", "--output", "--session", "--verify", "--cert", "--cert-key", "--proxy")) {
			switch strings.ToUpper(v) {
			case "POST", "PUT", "PATCH", "DELETE":
				method = strings.ToUpper(v)
			}
			if method == "" && (strings.Contains(v, "=") || strings.Contains(v, ":=")) && !strings.Contains(v, "://") {
				method = "POST"
			}
		}
		a.controlPlane(cl, method)
	}
	_ = depth
}

var cloudCLIs = set("gcloud", "az", "doctl", "hcloud", "linode-cli", "vultr-cli", "oci", "ibmcloud", "scw",
	"exo", "runpodctl", "upctl", "civo", "ovhcloud", "aliyun", "tccli", "flarectl")

var cloudVerbs = set("delete", "destroy", "terminate", "remove", "rm", "rb", "purge")

var cloudValued = set("--project", "--region", "--zone", "--format", "--account", "--configuration",
	"-g", "--resource-group", "--subscription", "-o", "--output", "--context", "-t", "--access-token",
	"--filter", "--query", "--stack", "-s", "--app", "-a", "--config", "-c", "--profile", "--cwd")

func (a *analyzer) terraform(cl call) {
	pos := positionals(cl.args, nil)
	if len(pos) == 0 {
		return
	}
	sub := pos[0]
	args := cl.args
	for i, v := range cl.args {
		if v == sub {
			args = cl.args[i+1:]
			break
		}
	}
	if (sub == "run-all" || sub == "run") && len(args) > 0 {
		if args[0] == "--all" {
			args = args[1:]
		}
		if len(args) == 0 {
			return
		}
		sub, args = args[0], args[1:]
	}
	tcl := call{args: args}
	switch sub {
	case "destroy":
		a.add(CategoryCloud, cl.prog+" destroy deletes every resource it manages", cl.src)
	case "apply":
		valued := set("-var", "-var-file", "-target", "-replace", "-state", "-state-out", "-backup", "-lock-timeout", "-parallelism")
		switch {
		case tcl.has("-destroy", "--destroy"):
			a.add(CategoryCloud, cl.prog+" apply -destroy deletes every resource it manages", cl.src)
		case tcl.has("-auto-approve", "--auto-approve", "-auto-approve=true"):
			a.add(CategoryCloud, cl.prog+" apply -auto-approve changes infrastructure without a reviewed plan", cl.src)
		case len(positionals(args, valued)) == 0:
			a.add(CategoryCloud, cl.prog+" apply without a saved plan file changes infrastructure from an unreviewed plan", cl.src)
		}
	case "state":
		if len(args) > 0 && args[0] == "rm" {
			a.add(CategoryCloud, cl.prog+" state rm drops resources from the state", cl.src)
		}
	case "workspace":
		if len(args) > 0 && args[0] == "delete" {
			a.add(CategoryCloud, cl.prog+" workspace delete removes a workspace's state", cl.src)
		}
	}
}

var awsValued = set("--region", "--profile", "--output", "--endpoint-url", "--query", "--color",
	"--cli-read-timeout", "--cli-connect-timeout", "--ca-bundle", "--cli-binary-format")

func (a *analyzer) aws(cl call) {
	pos := positionals(cl.args, awsValued)
	if len(pos) < 2 || cl.has("--dry-run") {
		return
	}
	svc, op := pos[0], pos[1]
	switch {
	case svc == "s3" && (op == "rm" || op == "rb"):
		a.add(CategoryCloud, "aws s3 "+op+" deletes cloud storage", cl.src)
	case svc == "s3" && op == "sync" && cl.has("--delete"):
		a.add(CategoryCloud, "aws s3 sync --delete deletes cloud storage", cl.src)
	case strings.HasPrefix(op, "delete-") || strings.HasPrefix(op, "terminate-") || strings.HasPrefix(op, "remove-") ||
		strings.HasPrefix(op, "purge-") || strings.HasPrefix(op, "deregister-"):
		a.add(CategoryCloud, "aws "+svc+" "+op+" deletes cloud resources", cl.src)
	}
}

var kubeValued = set("-n", "--namespace", "--context", "--kubeconfig", "-s", "--server", "--cluster",
	"--user", "--token", "-l", "--selector", "-f", "--filename", "-o", "--output", "--field-selector",
	"--as", "--as-group", "-c", "--container", "--timeout", "--grace-period", "--cascade", "-k", "--kustomize")

func kubeDryRun(cl call) bool {
	for _, v := range cl.args {
		if v == "--dry-run" || v == "--dry-run=client" || v == "--dry-run=server" || v == "--dry-run=true" {
			return true
		}
	}
	return false
}

func (a *analyzer) kubectl(cl call) {
	pos := positionals(cl.args, kubeValued)
	if (cl.prog == "k3s" || cl.prog == "microk8s") && len(pos) > 0 && pos[0] == "kubectl" {
		pos = pos[1:]
	}
	if len(pos) == 0 || kubeDryRun(cl) {
		return
	}
	switch pos[0] {
	case "delete":
		a.add(CategoryCloud, "kubectl delete removes cluster resources", cl.src)
	case "apply":
		if cl.hasPrefix("--prune") {
			a.add(CategoryCloud, "kubectl apply --prune deletes resources missing from the manifests", cl.src)
		}
	case "drain":
		a.add(CategoryCloud, "kubectl drain evicts every workload from a node", cl.src)
	case "replace":
		if cl.has("--force") {
			a.add(CategoryCloud, "kubectl replace --force deletes and recreates resources", cl.src)
		}
	}
}

var (
	commitWord    = lazyre.New(`(?i)(^|[^\w-])commit\b`)
	commitConfirm = lazyre.New(`(?i)commit-confirm|commit\s+confirm`)
	gitCommit     = lazyre.New(`(?i)\bgit(\s+-\S+)*\s+commit\b`)
	// Junos `commit check` validates the candidate and activates nothing; `show system
	// commit` (both devices) lists the commits.
	commitCheck = lazyre.New(`(?i)(^|[^\w-])commit\s+check\b`)
	showCommit  = lazyre.New(`(?i)(^|[^\w-])show(\s+[\w./-]+)*?\s+commit\b`)
	// Device operational-mode commands that erase, remove an image or stop the device:
	// Junos `request system zeroize|reboot|halt|power-off|software delete`, VyOS
	// `delete system image`.
	deviceOp = lazyre.New(`(?i)(^|[^\w-])(request\s+system\s+(zeroize|reboot|halt|power-off|software\s+delete)|delete\s+system\s+image)\b`)
)

// remoteDeviceOp reports a device operational command that cannot be undone.
func remoteDeviceOp(remote string) (string, bool) {
	if m := deviceOp().FindStringSubmatch(remote); m != nil {
		return "runs `" + strings.Join(strings.Fields(m[2]), " ") + "` on a network device over ssh: it erases the device, removes a software image or stops the device", true
	}
	return "", false
}

// remoteCommit reports a network device commit without an automatic rollback timer.
func remoteCommit(remote string) (string, bool) {
	r := gitCommit().ReplaceAllString(remote, "")
	r = commitCheck().ReplaceAllString(r, "$1")
	r = showCommit().ReplaceAllString(r, "$1")
	if commitWord().MatchString(r) && !commitConfirm().MatchString(r) {
		return "commits a remote device configuration over ssh without commit-confirm (no automatic rollback)", true
	}
	return "", false
}

func (a *analyzer) curl(cl call) {
	method := ""
	for i, v := range cl.args {
		switch {
		case v == "-X" || v == "--request":
			if i+1 < len(cl.args) {
				method = strings.ToUpper(cl.args[i+1])
			}
		case strings.HasPrefix(v, "--request="):
			method = strings.ToUpper(strings.TrimPrefix(v, "--request="))
		case strings.HasPrefix(v, "-X") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			method = strings.ToUpper(v[2:])
		case method == "" && (v == "-d" || v == "-F" || v == "--json" || v == "--form" || v == "--form-string" ||
			strings.HasPrefix(v, "--data") || (strings.HasPrefix(v, "-d") && !strings.HasPrefix(v, "--"))):
			method = "POST"
		case method == "" && (v == "-T" || v == "--upload-file"):
			method = "PUT"
		}
	}
	if cl.has("-G", "--get") && method == "POST" {
		method = "GET"
	}
	a.controlPlane(cl, method)
}

// controlPlane flags a mutating HTTP method sent to a cloud control-plane API.
func (a *analyzer) controlPlane(cl call, method string) {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
	default:
		return
	}
	for _, v := range cl.args {
		if h, ok := controlPlaneHost(v); ok {
			a.add(CategoryCloud, cl.prog+" sends "+method+" to the cloud control plane "+h, cl.src)
			return
		}
	}
}

var controlPlaneSuffixes = []string{
	".amazonaws.com", "api.cloudflare.com", "api.digitalocean.com", ".googleapis.com",
	"management.azure.com", "management.core.windows.net", "api.runpod.io", "api.runpod.ai", "rest.runpod.io",
	"api.ovh.com", "api.ovhcloud.com", "api.linode.com", "api.vultr.com", "api.hetzner.cloud",
	"api.heroku.com", "api.fly.io", "api.machines.dev", "api.vercel.com", "api.netlify.com",
	"api.scaleway.com", "api.exoscale.com", ".oraclecloud.com", "kubernetes.default.svc",
	"api.upcloud.com", "api.civo.com",
}

// controlPlaneHost extracts the host of a URL-ish argument and reports whether it is a
// known control-plane API (or a Kubernetes API server on :6443).
func controlPlaneHost(v string) (string, bool) {
	s := v
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else if !strings.Contains(s, ".") || strings.HasPrefix(s, "-") {
		return "", false
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	host, port := s, ""
	if i := strings.LastIndex(s, ":"); i >= 0 {
		host, port = s[:i], s[i+1:]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if port == "6443" {
		return host + ":6443", true
	}
	for _, suf := range controlPlaneSuffixes {
		s := strings.TrimPrefix(suf, ".")
		if host == s || strings.HasSuffix(host, "."+s) {
			return host, true
		}
	}
	return "", false
}

// crossSegment checks what spans segments: SQL fed to a client through a pipe or a
// heredoc, and device commits fed to ssh.
func (a *analyzer) crossSegment(src string, s *shellcmd.Script) {
	var sqlClient, ssh, fetch, stdinShell string
	for _, c := range s.Commands {
		p := c.Program()
		if (p == "curl" || p == "wget") && fetch == "" {
			fetch = c.Source
		}
		if shellcmd.IsShell(p) && stdinShell == "" && readsScriptFromStdin(c) {
			stdinShell = c.Source
		}
		if sqlClients[p] && sqlClient == "" {
			sqlClient = c.Source
		}
		if p == "ssh" && ssh == "" {
			ssh = c.Source
		}
	}
	if sqlClient != "" {
		if r, ok := sqlReason(src); ok {
			a.add(CategoryDataLoss, r, sqlClient)
		}
	}
	if ssh != "" {
		if r, ok := remoteCommit(src); ok {
			a.add(CategoryCloud, r, ssh)
		} else if r, ok := remoteDeviceOp(src); ok {
			a.add(CategoryCloud, r, ssh)
		}
	}
	if fetch != "" && stdinShell != "" {
		a.add(CategoryOpaque, "runs a script downloaded from the network, which cannot be checked before it runs", src)
	}
}

// readsScriptFromStdin reports whether a shell reads its script from stdin or from a
// process substitution (`| sh`, `bash -s`, `bash <(curl …)`), rather than from -c or a file.
func readsScriptFromStdin(c shellcmd.Command) bool {
	for _, w := range c.Args[1:] {
		v := w.Raw
		switch {
		case strings.HasPrefix(v, "<("):
			return true
		case v == "-s" || v == "-" || strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && strings.Contains(v, "c"):
			return false
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
		default:
			return false // a script file
		}
	}
	return true
}
