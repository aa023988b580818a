package preflight

import "testing"

// TestCloudOpsProviders holds the destructive classifier to each Cloud Ops provider with
// real command lines: the read-only and dry-run verbs pass, the delete verbs and the
// device commits without an automatic rollback are cloud mutations (a person decides).
func TestCloudOpsProviders(t *testing.T) {
	cases := []struct {
		provider, cmd string
		destructive   bool
	}{
		{"aws", "aws ec2 describe-instances --region eu-west-1", false},
		{"aws", "aws ec2 terminate-instances --instance-ids i-0123456789abcdef0 --dry-run", false},
		{"aws", "aws ec2 terminate-instances --instance-ids i-0123456789abcdef0", true},
		{"aws", "aws rds delete-db-instance --db-instance-identifier example-db --skip-final-snapshot", true},
		{"aws", "aws cloudformation delete-stack --stack-name example-stack", true},
		{"gcp", "gcloud compute instances list --project example-project", false},
		{"gcp", "gcloud compute instances describe vm-1 --zone europe-west1-b", false},
		{"gcp", "gcloud compute instances delete vm-1 --zone europe-west1-b", true},
		{"gcp", "gcloud storage rm --recursive gs://example-bucket", true},
		{"gcp", "gcloud sql instances delete example-db", true},
		{"cloudflare", "wrangler deployments list", false},
		{"cloudflare", "wrangler deploy --dry-run --outdir dist", false},
		{"cloudflare", "wrangler delete --name example-worker", true},
		{"cloudflare", "wrangler d1 delete example-db", true},
		{"cloudflare", "wrangler kv namespace delete --namespace-id 0123456789abcdef", true},
		{"cloudflare", "flarectl zone list", false},
		{"cloudflare", "flarectl dns delete --zone example.com --id 0123", true},
		{"cloudflare", "curl -X DELETE https://api.cloudflare.com/client/v4/zones/Z/dns_records/R", true},
		{"digitalocean", "doctl compute droplet list", false},
		{"digitalocean", "doctl compute droplet get 386734086", false},
		{"digitalocean", "doctl compute droplet delete 386734086 --force", true},
		{"digitalocean", "doctl compute droplet del 386734086", true},
		{"digitalocean", "doctl databases delete 0123abcd", true},
		{"runpod", "runpodctl get pod", false},
		{"runpod", "runpodctl remove pod 0123abcdexample", true},
		{"runpod", "runpodctl remove pods example-name --podCount 4", true},
		{"runpod", "curl -X DELETE https://rest.runpod.io/v1/pods/0123abcdexample", true},
		{"vyos", "ssh vyos show configuration commands", false},
		{"vyos", `ssh vyos 'configure; set firewall ipv4 input filter rule 100 action accept; compare; exit discard'`, false},
		{"vyos", `ssh vyos 'configure; set firewall ipv4 input filter rule 100 action accept; commit-confirm 5'`, false},
		{"vyos", `ssh vyos 'configure; delete firewall ipv4 input filter rule 100; commit; save'`, true},
		{"vyos", "ssh vyos show system commit", false},
		{"vyos", `ssh vyos 'show system commit; configure; set x; commit'`, true},
		{"vyos", "ssh vyos delete system image 1.4.0", true},
		{"vyos", "ssh vyos reboot now", true},
		{"junos", "ssh junos show configuration firewall", false},
		{"junos", `ssh junos 'configure private; set firewall family inet filter EDGE term t then accept; show | compare; commit check; rollback 0; exit'`, false},
		{"junos", `ssh junos 'configure; set x; commit confirmed 5'`, false},
		{"junos", `ssh junos 'configure; set x; commit check; commit'`, true},
		{"junos", `ssh junos 'configure; delete firewall family inet filter EDGE; commit and-quit'`, true},
		{"junos", "ssh junos request system zeroize", true},
		{"junos", "ssh junos request system reboot", true},
		{"junos", "ssh junos request system software delete junos-install-example", true},
		{"junos", "ssh junos <<EOF\nrequest system zeroize\nEOF", true},
	}
	for _, c := range cases {
		var got bool
		for _, f := range Classify(c.cmd) {
			got = got || FindingDestructive(f)
		}
		if got != c.destructive {
			t.Errorf("%s: %q: destructive = %v, want %v (%v)", c.provider, c.cmd, got, c.destructive, Classify(c.cmd))
		}
	}
}
