package ops

import (
	"slices"
	"strings"
	"testing"
)

func TestReadOnlyAllowlistAccepts(t *testing.T) {
	cases := map[string][]string{
		`sqlite3 -readonly db.sqlite .schema`:                                               {"sqlite3", "-readonly", "db.sqlite", ".schema"},
		`sqlite3 -readonly -json db.sqlite "SELECT count(*) FROM users WHERE name = 'a b'"`: {"sqlite3", "-readonly", "-json", "db.sqlite", "SELECT count(*) FROM users WHERE name = 'a b'"},
		`grep -c 'allow tcp/8443' /etc/fw.conf`:                                             {"grep", "-c", "allow tcp/8443", "/etc/fw.conf"},
		`/usr/bin/cat "a file"`:                                                             {"/usr/bin/cat", "a file"},
		`git -C repo log --oneline -n 1`:                                                    {"git", "-C", "repo", "log", "--oneline", "-n", "1"},
		`git --git-dir=bare.git rev-parse HEAD`:                                             {"git", "--git-dir=bare.git", "rev-parse", "HEAD"},
		`terraform -chdir=infra show -json`:                                                 {"terraform", "-chdir=infra", "show", "-json"},
		`kubectl -n prod get deploy web -o jsonpath={.spec.replicas}`:                       nil, // { } unquoted: refused (below)
		`kubectl -n prod get deploy web -o 'jsonpath={.spec.replicas}'`:                     {"kubectl", "-n", "prod", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"},
		`aws --region eu-west-1 ec2 describe-security-groups --group-ids sg-1`:              {"aws", "--region", "eu-west-1", "ec2", "describe-security-groups", "--group-ids", "sg-1"},
		`aws sts get-caller-identity`:                                                       {"aws", "sts", "get-caller-identity"},
		`gcloud compute firewall-rules list --project p`:                                    {"gcloud", "compute", "firewall-rules", "list", "--project", "p"},
		`curl -sSf --max-time 5 https://example.com/health`:                                 {"curl", "-sSf", "--max-time", "5", "https://example.com/health"},
		`curl -sS -X GET -H 'Accept: application/json' http://localhost:8443/`:              {"curl", "-sS", "-X", "GET", "-H", "Accept: application/json", "http://localhost:8443/"},
		`systemctl is-active nginx`:                                                         {"systemctl", "is-active", "nginx"},
		`find . -name '*.sql' -type f`:                                                      {"find", ".", "-name", "*.sql", "-type", "f"},
		`test -f out.txt`:                                                                   {"test", "-f", "out.txt"},
		`ping -c 3 10.0.0.1`:                                                                {"ping", "-c", "3", "10.0.0.1"},
		`cat a\ b`:                                                                          {"cat", "a b"},
	}
	for line, want := range cases {
		got, err := ParseReadOnlyCommand(line)
		if want == nil {
			if err == nil {
				t.Errorf("%s: accepted, want refused", line)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if !slices.Equal(got.Argv, want) {
			t.Errorf("%s: argv %q, want %q", line, got.Argv, want)
		}
	}
}

func TestReadOnlyAllowlistRefusesInjection(t *testing.T) {
	cases := []struct{ line, why string }{
		{`cat out.txt; rm -rf /`, `";"`},
		{`cat out.txt && rm -rf /`, `"&"`},
		{`cat out.txt & rm x`, `"&"`},
		{`cat out.txt || rm x`, `"|"`},
		{`cat out.txt | sh`, `"|"`},
		{"cat out.txt\nrm -rf /", `"\n"`},
		{"cat out.txt\r\nrm -rf /", `"\r"`},
		{`cat $(rm -rf /)`, `"$"`},
		{`cat "$(rm -rf /)"`, `"$"`},
		{`cat '$(rm -rf /)'`, `"$"`},
		{"cat `rm -rf /`", "\"`\""},
		{"cat '`rm -rf /`'", "\"`\""},
		{`cat ${HOME}`, `"$"`},
		{`cat out.txt > /etc/passwd`, `">"`},
		{`cat < /etc/shadow`, `"<"`},
		{`grep x <(rm -rf /)`, `"<"`},
		{`cat (out.txt)`, "grouping"},
		{`cat {a,b}`, "grouping"},
		{`cat "unterminated`, "unterminated"},
		{`cat 'unterminated`, "unterminated"},
		{`cat x\`, "backslash"},
		{``, "empty"},
		{`   `, "empty"},
		{`rm -rf /`, "not on the read-only allowlist"},
		{`sh -c 'cat x'`, "not on the read-only allowlist"},
		{`bash -c 'cat x'`, "not on the read-only allowlist"},
		{`env cat x`, "not on the read-only allowlist"},
		{`xargs rm`, "not on the read-only allowlist"},
		{`./cat x`, "bare program name"},
		{`/tmp/cat x`, "bare program name"},
		{`/usr/bin/../bin/rm x`, "not clean"},
		{`sed -i s/a/b/ x`, "not on the read-only allowlist"},
		{`tail -f /var/log/syslog`, "follow"},
		{`find . -delete`, "-delete"},
		{`find . -exec rm {} +`, "grouping"},
		{`find . -exec rm '{}' +`, "-exec"},
		{`sqlite3 db.sqlite .schema`, "-readonly"},
		{`sqlite3 -readonly db.sqlite`, "one statement"},
		{`sqlite3 -readonly db.sqlite .shell\ rm\ x`, ".shell"},
		{`sqlite3 -readonly db.sqlite '.output /tmp/x'`, ".output"},
		{`sqlite3 -readonly db.sqlite '.system rm x'`, ".system"},
		{`sqlite3 -readonly -cmd '.shell rm x' db.sqlite .schema`, "-cmd"},
		{`sqlite3 -readonly -init evil.sql db.sqlite .schema`, "-init"},
		{`sqlite3 -readonly db.sqlite "SELECT writefile('/tmp/x', 'y')"`, "writefile"},
		{`sqlite3 -readonly db.sqlite "SELECT load_extension('/tmp/evil')"`, "load_extension"},
		{`sqlite3 -readonly db.sqlite "DELETE FROM users"`, "SELECT"},
		{`sqlite3 -readonly db.sqlite "WITH x AS (SELECT 1) DELETE FROM users"`, "write"},
		{`sqlite3 -readonly db.sqlite "ATTACH 'x.db' AS x"`, "SELECT"},
		{`sqlite3 -readonly file:db.sqlite?mode=rwc .schema`, "URI"},
		{`sqlite3 -readonly db.sqlite "SELECT 1" "SELECT 2"`, "one statement"},
		{`git push --force`, "push"},
		{`git -c core.fsmonitor=evil status`, "-c"},
		{`git diff --output=/tmp/x`, "--output"},
		{`git log --ext-diff`, "--ext-diff"},
		{`git reset --hard`, "reset"},
		{`terraform apply -auto-approve`, "apply"},
		{`terraform plan -out=tfplan`, "-out"},
		{`terraform state rm x`, "state list"},
		{`kubectl delete pod x`, "delete"},
		{`kubectl -n get delete pod x`, "delete"},
		{`kubectl apply -f x.yaml`, "apply"},
		{`aws ec2 terminate-instances --instance-ids i-1`, "terminate-instances"},
		{`aws s3 rm s3://b/k`, "s3 rm"},
		{`aws s3api get-object --bucket b --key k out`, "get-object"},
		{`aws secretsmanager get-secret-value --secret-id x`, "get-secret-value"},
		{`aws ssm describe-parameters --with-decryption`, "--with-decryption"},
		{`gcloud compute instances delete x`, "delete"},
		{`curl -X POST https://api/x`, "GET"},
		{`curl --request=DELETE https://api/x`, "GET"},
		{`curl -d a=b https://api/x`, "-d"},
		{`curl -o /etc/x https://x`, "-o"},
		{`curl -K cfg https://x`, "-K"},
		{`curl --data-binary @f https://x`, "--data-binary"},
		{`curl file:///etc/passwd`, "http(s)"},
		{`curl -sS`, "URL"},
		{`systemctl restart nginx`, "restart"},
		{`ping 10.0.0.1`, "-c N"},
	}
	for _, tc := range cases {
		_, err := ParseReadOnlyCommand(tc.line)
		if err == nil {
			t.Errorf("%q was accepted", tc.line)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: error %q does not say %s", tc.line, err, tc.why)
		}
	}
}

// FuzzParseReadOnlyCommand checks that whatever is accepted is one command on the
// allowlist with no shell control character anywhere, and that parsing never panics.
func FuzzParseReadOnlyCommand(f *testing.F) {
	for _, s := range []string{"cat x", `sqlite3 -readonly db "SELECT 1"`, "git log", "curl -sS https://x", "a;b", "cat $(x)",
		"cat 'a\"b'", `cat "a\"b"`, "find . -name x", "aws ec2 describe-x", "kubectl get po",
		"ssh vyos show configuration", "ssh -p 22 junos show system commit", "wrangler versions list", "doctl compute droplet list",
		"runpodctl get pod"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := ParseReadOnlyCommand(line)
		if err != nil {
			return
		}
		if strings.ContainsAny(line, shellControl) {
			t.Fatalf("accepted %q with a shell control character", line)
		}
		if len(cmd.Argv) == 0 {
			t.Fatalf("accepted %q with no program", line)
		}
		if _, ok := readOnlyPrograms[cmd.Program]; !ok {
			t.Fatalf("accepted %q: program %q is not allowlisted", line, cmd.Program)
		}
		for _, a := range cmd.Argv {
			if strings.ContainsAny(a, shellControl) {
				t.Fatalf("accepted %q: word %q has a control character", line, a)
			}
		}
		if cmd.Program == "ssh" {
			// One operational-mode show, every remote word one the device's shell keeps as is.
			i := slices.Index(cmd.Argv, "show")
			if i < 2 {
				t.Fatalf("accepted ssh without a remote show: %q", line)
			}
			for _, w := range cmd.Argv[i:] {
				if strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@=,+") != "" {
					t.Fatalf("accepted ssh remote word %q: %q", w, line)
				}
			}
		}
		if cmd.Program == "sqlite3" && !slices.Contains(cmd.Argv, "-readonly") {
			t.Fatalf("accepted sqlite3 without -readonly: %q", line)
		}
	})
}
