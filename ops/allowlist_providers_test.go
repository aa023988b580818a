package ops

import (
	"strings"
	"testing"
)

// TestVerifyAllowlistProviders holds the verify allowlist to each Cloud Ops provider's
// read-only verbs, with real command lines: what inspects is accepted, what mutates,
// runs a remote program, prints a secret or never ends is refused with the reason.
func TestVerifyAllowlistProviders(t *testing.T) {
	cases := []struct {
		provider, line string
		refused        string // "" = accepted; else a part of the error
	}{
		{"aws", "aws ec2 describe-instances --region eu-west-1", ""},
		{"aws", "aws ec2 describe-instances --instance-ids i-0123456789abcdef0 --query Reservations[0].Instances[0].State.Name --output text", ""},
		{"aws", "aws s3api get-bucket-versioning --bucket example-bucket", ""},
		{"aws", "aws ec2 terminate-instances --instance-ids i-0123456789abcdef0", "only describe-*"},
		{"aws", "aws ec2 terminate-instances --instance-ids i-0123456789abcdef0 --dry-run", "only describe-*"},
		{"aws", "aws secretsmanager get-secret-value --secret-id x", "credential"},
		{"gcp", "gcloud compute instances list --project example-project", ""},
		{"gcp", "gcloud compute instances describe vm-1 --zone europe-west1-b --format 'value(status)'", ""},
		{"gcp", "gcloud compute instances delete vm-1 --zone europe-west1-b", `"delete" changes state`},
		{"gcp", "gcloud compute ssh vm-1 --zone europe-west1-b", `"ssh" changes state`},
		{"cloudflare", "wrangler whoami", ""},
		{"cloudflare", "wrangler deployments list --name example-worker", ""},
		{"cloudflare", "wrangler versions view 00000000-0000-0000-0000-000000000000", ""},
		{"cloudflare", "wrangler r2 bucket list", ""},
		{"cloudflare", "wrangler delete --name example-worker", `"delete" is refused`},
		{"cloudflare", "wrangler deploy --dry-run", `"deploy" is refused`},
		{"cloudflare", "wrangler tail example-worker", "is refused"},
		{"cloudflare", "wrangler kv key get --namespace-id abc k", "is refused"},
		{"cloudflare", "wrangler r2 bucket delete example-bucket", "is refused"},
		{"digitalocean", "doctl compute droplet list --format ID,Name,Status", ""},
		{"digitalocean", "doctl compute droplet get 386734086 --output json", ""},
		{"digitalocean", "doctl account get", ""},
		{"digitalocean", "doctl compute droplet delete 386734086 --force", `"delete" changes state`},
		{"digitalocean", "doctl compute droplet rm 386734086", `"rm" changes state`},
		{"digitalocean", "doctl compute ssh 386734086", `"ssh" changes state`},
		{"digitalocean", "doctl kubernetes cluster kubeconfig save c1", `"save" changes state`},
		{"digitalocean", "doctl compute droplet-action power-off 386734086", `"power-off" changes state`},
		{"runpod", "runpodctl get pod", ""},
		{"runpod", "runpodctl get pod 0123abcdexample --allfields", ""},
		{"runpod", "runpodctl remove pod 0123abcdexample", "only `runpodctl get"},
		{"runpod", "runpodctl stop pod 0123abcdexample", "only `runpodctl get"},
		{"runpod", "runpodctl config --apiKey x", "only `runpodctl get"},
		{"vyos", "ssh vyos show configuration commands", ""},
		{"vyos", "ssh -p 2222 -l vyos -o BatchMode=yes router.example.com show firewall", ""},
		{"vyos", "ssh vyos /opt/vyatta/bin/vyatta-op-cmd-wrapper show interfaces", ""},
		{"vyos", "ssh vyos 'configure; delete firewall; commit'", "shell control"},
		{"vyos", "ssh vyos configure", "only `ssh HOST show"},
		{"vyos", "ssh vyos delete system image 1.4.0", "only `ssh HOST show"},
		{"vyos", "ssh vyos reboot now", "only `ssh HOST show"},
		{"junos", "ssh junos show configuration firewall", ""},
		{"junos", "ssh admin@junos show system commit", ""},
		{"junos", "ssh junos request system zeroize", "only `ssh HOST show"},
		{"junos", "ssh junos 'show configuration | compare rollback 1'", "shell control"},
		// The device's shell reads the remote words again: nothing it would expand or split.
		{"junos", `ssh junos show "version (rm -rf /)"`, "remote word"},
		{"junos", `ssh junos show 'x"y'`, "remote word"},
		{"junos", "ssh junos show 'a b'", "remote word"},
		{"junos", "ssh junos show '*'", "remote word"},
		{"junos", "ssh junos show ~root", "remote word"},
		// ssh options that run a local program, forward ports or read another config.
		{"ssh", "ssh -o ProxyCommand=evil junos show version", "-o ProxyCommand=evil is refused"},
		{"ssh", "ssh -oProxyCommand=evil junos show version", "option -oProxyCommand=evil is refused"},
		{"ssh", "ssh -o LocalCommand=evil -o PermitLocalCommand=yes junos show version", "is refused"},
		{"ssh", "ssh -o 'BatchMode=yes ProxyCommand=evil' junos show version", "with a plain value"},
		{"ssh", "ssh -o ConnectTimeout=5 -o StrictHostKeyChecking=yes junos show version", ""},
		{"ssh", "ssh -F cfg junos show version", "option -F is refused"},
		{"ssh", "ssh -L 8080:localhost:80 junos show version", "option -L is refused"},
		{"ssh", "ssh junos", "only `ssh HOST show"},
	}
	for _, c := range cases {
		_, err := ParseReadOnlyCommand(c.line)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: %s: refused, want accepted: %v", c.provider, c.line, err)
		case c.refused != "" && err == nil:
			t.Errorf("%s: %s: accepted, want refused", c.provider, c.line)
		case c.refused != "" && !strings.Contains(err.Error(), c.refused):
			t.Errorf("%s: %s: error %q does not say %q", c.provider, c.line, err, c.refused)
		}
	}
}
