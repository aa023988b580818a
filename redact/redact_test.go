package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

const M = Marker

func TestStringEachShape(t *testing.T) {
	cases := []struct {
		name, in, want, secret string
	}{
		{"inline assignment", "PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=" + M + " psql -h db", "hunter2"},
		{"quoted assignment", `export API_KEY="s3cr3t value"`, `export API_KEY="` + M + `"`, "s3cr3t"},
		{"unterminated quote", "export API_KEY=\"s3cr3t value\nnext", "export API_KEY=\"" + M + "\nnext", "s3cr3t"},
		{"assignment among others", "AWS_PROFILE=prod GITHUB_TOKEN=abc123 gh pr list", "AWS_PROFILE=prod GITHUB_TOKEN=" + M + " gh pr list", "abc123"},
		{"value with a comma", "DB_PASSWORD=a,b,c run", "DB_PASSWORD=" + M + " run", "a,b,c"},
		{"client secret", "CLIENT_SECRET=zzz9 run", "CLIENT_SECRET=" + M + " run", "zzz9"},
		{"MYSQL_PWD", "MYSQL_PWD=zzz9 mysql", "MYSQL_PWD=" + M + " mysql", "zzz9"},
		{"json field", `{"password": "hunter2", "user": "bob"}`, `{"password": "` + M + `", "user": "bob"}`, "hunter2"},
		{"escaped json field", `{\"password\":\"hunter2\",\"user\":\"bob\"}`, `{\"password\":\"` + M + `\",\"user\":\"bob\"}`, "hunter2"},
		{"yaml field", "db_password: hunter2\nuser: bob", "db_password: " + M + "\nuser: bob", "hunter2"},
		{"ruby hash", `password => "hunter2"`, `password => "` + M + `"`, "hunter2"},
		{"--password value", "mysql --password hunter2 -u root", "mysql --password " + M + " -u root", "hunter2"},
		{"--password=value", "mysql --password=hunter2 -u root", "mysql --password=" + M + " -u root", "hunter2"},
		{"-password (single dash)", "tool -password hunter2", "tool -password " + M, "hunter2"},
		{"--token value", "vault login --token s.abcdef", "vault login --token " + M, "s.abcdef"},
		{"--token=value", "tool --token=s.abcdef", "tool --token=" + M, "s.abcdef"},
		{"--secret", "tool --secret 'a b c'", "tool --secret '" + M + "'", "a b c"},
		{"--api-key", "tool --api-key=K123 --x", "tool --api-key=" + M + " --x", "K123"},
		{"--client-secret", "az login --client-secret abc", "az login --client-secret " + M, "abc"},
		{"value starting with a dash", "tool --password=-Xy9z", "tool --password=" + M, "-Xy9z"},
		{"keytool -storepass", "keytool -list -storepass ch4ngeit", "keytool -list -storepass " + M, "ch4ngeit"},
		{"mysql -p attached", "mysql -u root -phunter2 db", "mysql -u root -p" + M + " db", "hunter2"},
		{"sshpass -p", "sshpass -p hunter2 ssh host", "sshpass -p " + M + " ssh host", "hunter2"},
		{"docker login -p", "docker login -u bob -p hunter2 ghcr.io", "docker login -u bob -p " + M + " ghcr.io", "hunter2"},
		{"redis-cli -a", "redis-cli -h r -a hunter2 ping", "redis-cli -h r -a " + M + " ping", "hunter2"},
		{"curl -u", "curl -u bob:hunter2 https://x", "curl -u bob:" + M + " https://x", "hunter2"},
		{"curl --user=", "curl --user=bob:hunter2 https://x", "curl --user=bob:" + M + " https://x", "hunter2"},
		{"openssl -passin", "openssl rsa -in k.pem -passin pass:hunter2", "openssl rsa -in k.pem -passin pass:" + M, "hunter2"},
		{"Authorization header", "curl -H 'Authorization: token ghx_123' https://x", "curl -H 'Authorization: " + M + "' https://x", "ghx_123"},
		{"Authorization header line", "GET / HTTP/1.1\r\nAuthorization: Basic dXNlcjpwYXNz\r\n", "GET / HTTP/1.1\r\nAuthorization: " + M + "\r\n", "dXNlcjpwYXNz"},
		{"Authorization in JSON", `{"Authorization": "token abc123"}`, `{"Authorization": "` + M + `"}`, "abc123"},
		{"Cookie header", "Cookie: session=abc123; theme=dark", "Cookie: " + M, "abc123"},
		{"bearer token", `{"Authorization": "Bearer eyJhbGciOi.J9.x"}`, `{"Authorization": "` + M + `"}`, "eyJhbGciOi"},
		{"bare bearer", "send it with Bearer abc.def-123", "send it with Bearer " + M, "abc.def-123"},
		{"basic credentials", "curl -H 'X: Basic dXNlcjpwYXNz'", "curl -H 'X: Basic " + M + "'", "dXNlcjpwYXNz"},
		{"url credentials", "git clone https://bob:hunter2@example.com/r.git", "git clone https://bob:" + M + "@example.com/r.git", "hunter2"},
		{"url credentials with a slash", "postgres://bob:a/b@db/x", "postgres://bob:" + M + "@db/x", "a/b"},
		{"slack webhook", "curl https://hooks.slack.com/services/T0/B0/abcdEFGH", "curl https://hooks.slack.com/services/" + M, "abcdEFGH"},
		{"AWS access key", "key AKIAIOSFODNN7EXAMPLE used", "key " + M + " used", "AKIAIOSFODNN7EXAMPLE"},
		{"AWS session key", "ASIAY34FZKBOKMUTVV7A", M, "ASIAY34FZKBOKMUTVV7A"},
		{"AWS secret key (configure)", "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws configure set aws_secret_access_key " + M, "wJalrXUtnFEMI"},
		{"AWS secret key (JSON)", `"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`, `"SecretAccessKey": "` + M + `"`, "wJalrXUtnFEMI"},
		{"GitHub ghp", "see ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 end", "see " + M + " end", "ghp_aBcD"},
		{"GitHub gho", "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", M, "gho_"},
		{"GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", M, "github_pat_"},
		{"GitLab", "glpat-xxxxxxxxxxxxxxxxxxxx12", M, "glpat-"},
		{"Slack bot", "xoxb-123456789012-1234567890123-AbCdEfGhIjKl", M, "xoxb-"},
		{"Slack user", "send xoxp-1234-5678-9012-abcdef", "send " + M, "xoxp-"},
		{"OpenAI", "sk-proj-abcdefghijklmnopqrstuvwx0123", M, "sk-proj-"},
		{"Anthropic", "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-AAAA ok", "key " + M + " ok", "sk-ant-"},
		{"Stripe", "sk_live_abcdefghijklmnop1234", M, "sk_live_"},
		{"Google", "AIzaSyA-abcdefghijklmnopqrstuvwxyz12345", M, "AIzaSy"},
		{"npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", M, "npm_"},
		{"Hugging Face", "hf_abcdefghijklmnopqrstuvwxyzABCDEF", M, "hf_"},
		{"JWT", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "token " + M, "eyJzdWIi"},
		{"private key", "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\nb",
			"a\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + M + "\n-----END OPENSSH PRIVATE KEY-----\nb", "b3BlbnNzaC1rZXktdjEAAAA"},
		{"PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
			"-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + M + "\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF"},
		{"truncated private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq",
			"-----BEGIN PRIVATE KEY-----\n" + M + "\n-----END PRIVATE KEY-----", "MIIEvQIBADANBgkq"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in)
			if got != tc.want {
				t.Fatalf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if strings.Contains(got, tc.secret) {
				t.Fatalf("secret %q survived", tc.secret)
			}
			if again := String(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
			if len(Kinds(tc.in)) == 0 || len(Kinds(got)) != 0 {
				t.Fatalf("kinds: %v before, %v after", Kinds(tc.in), Kinds(got))
			}
		})
	}
}

func TestStringLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{
		"sqlite3 db.sqlite < migrate.sql",
		"ALTER TABLE users ADD COLUMN email TEXT;",
		"PWD=/home/bob HOME=/root PATH=/usr/bin OLDPWD=/tmp",
		"git log --oneline -n 5",
		"kubectl get pods -n prod --context eu",
		"terraform plan -out=tfplan",
		"aws ec2 describe-instances --region eu-west-1",
		"AUTHOR=bob SORT=asc",
		"docker run -p 8080:80 nginx",
		"psql -p 5432 -h db",
		"mysql -p -u root",
		"GITHUB_TOKEN=$GH_TOKEN gh pr list",
		"curl -H \"Authorization: Bearer ${TOKEN}\"",
		"docker login --password-stdin -u bob ghcr.io",
		"a basic example of basic usage",
		"ssh -p 2222 host",
		"€ é ü",
	} {
		if got := String(s); got != s && !strings.Contains(s, "${TOKEN}") {
			t.Errorf("String(%q) = %q", s, got)
		}
	}
}

func TestStringWithSecrets(t *testing.T) {
	secrets := []string{"RED", "hunter2-long", "hunter2"}
	got := StringWithSecrets("a hunter2-long b hunter2 c RED d", secrets)
	if want := "a " + M + " b " + M + " c " + M + " d"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if again := StringWithSecrets(got, secrets); again != got {
		t.Fatalf("not idempotent: %q -> %q", got, again)
	}
}

func TestArgv(t *testing.T) {
	cases := []struct {
		in, want []string
	}{
		{[]string{"mysql", "--password", "hunter2", "-u", "root"}, []string{"mysql", "--password", M, "-u", "root"}},
		{[]string{"env", "PGPASSWORD=hunter2", "psql"}, []string{"env", "PGPASSWORD=" + M, "psql"}},
		{[]string{"sshpass", "-p", "hunter2", "ssh", "h"}, []string{"sshpass", "-p", M, "ssh", "h"}},
		{[]string{"curl", "-H", "Authorization: Bearer abc", "-u", "bob:pw"}, []string{"curl", "-H", "Authorization: " + M, "-u", "bob:" + M}},
		{[]string{"tool", "--secret", "a b c"}, []string{"tool", "--secret", M}},
		{[]string{"curl", "-H", "Bearer", "tok"}, []string{"curl", "-H", "Bearer", M}},
		{[]string{"docker", "run", "-p", "8080:80"}, []string{"docker", "run", "-p", "8080:80"}},
		{[]string{"sudo", "mysql", "-phunter2"}, []string{"sudo", "mysql", "-p" + M}},
	}
	for _, tc := range cases {
		got := Argv(tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("Argv(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := Argv(got); strings.Join(again, "\x00") != strings.Join(got, "\x00") {
			t.Errorf("not idempotent: %q -> %q", got, again)
		}
	}
}

func TestJSONStaysValid(t *testing.T) {
	detail := map[string]any{
		"output":   "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nexport TOKEN=abc123",
		"password": "hunter2",
		"pin":      1234,
		"nested":   []any{map[string]any{"api_key": "k-999", "note": "Authorization: Bearer zzz"}},
		"argv":     []any{"mysql", "--password", "pw-in-argv"},
		"token":    "$GH_TOKEN",
		"exit":     0,
		"html":     "a<b>&c",
	}
	b, err := JSON(detail)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("not valid JSON: %s", b)
	}
	for _, secret := range []string{"MIIEpAIBAAKCAQEA", "abc123", "hunter2", "k-999", "zzz", "pw-in-argv"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("%q survived in %s", secret, b)
		}
	}
	if back["exit"] != float64(0) || back["pin"] != float64(1234) || back["token"] != "$GH_TOKEN" || back["html"] != "a<b>&c" {
		t.Errorf("ordinary values changed: %s", b)
	}
	again, err := RawJSON(b)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("not idempotent:\n%s\n%s", b, again)
	}
	if _, err := RawJSON([]byte("{")); err == nil {
		t.Fatal("invalid JSON accepted")
	}
}

// writeChunks writes in to a Writer in chunks of n bytes and returns what came out.
func writeChunks(t *testing.T, in string, n int, secrets []string) string {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out, secrets)
	for i := 0; i < len(in); i += n {
		if _, err := w.Write([]byte(in[i:min(i+n, len(in))])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestWriterAcrossChunks(t *testing.T) {
	in := "start\nexport PGPASSWORD=hunter2\nvalue abcdef and xyz\r50%\rtoken sk-ant-api03-abcdefghijklmnopqrstuvwxyz\n" +
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nQUJDREVGR0hJSktM\n-----END RSA PRIVATE KEY----- after\nmulti-line-one\nend"
	secrets := []string{"abcdef", "xyz", "multi-line-one\nmulti-line-two"}
	want := ""
	for chunk := 1; chunk <= len(in); chunk++ {
		got := writeChunks(t, in, chunk, secrets)
		if chunk == 1 {
			want = got
		} else if got != want {
			t.Fatalf("chunk %d:\n%q\nchunk 1:\n%q", chunk, got, want)
		}
	}
	for _, s := range []string{"hunter2", "abcdef", "xyz", "sk-ant-", "MIIEpAIBAAKCAQEA", "QUJDREVGR0hJSktM", "multi-line-one"} {
		if strings.Contains(want, s) {
			t.Errorf("%q survived:\n%s", s, want)
		}
	}
	for _, s := range []string{"start\n", "\r50%\r", " after\n", "\nend"} {
		if !strings.Contains(want, s) {
			t.Errorf("ordinary output %q lost:\n%q", s, want)
		}
	}
}

func TestWriterLongLineWithoutNewline(t *testing.T) {
	in := strings.Repeat("x ", maxLine) + "Bearer abcdefghij " + strings.Repeat("y", 10)
	for _, n := range []int{1000, maxLine - 1, len(in)} {
		got := writeChunks(t, in, n, []string{"yyyyyyyyyy"})
		if strings.Contains(got, "abcdefghij") || strings.Contains(got, "yyyyyyyyyy") {
			t.Fatalf("chunk %d: secret survived the cut", n)
		}
	}
}

// FuzzString checks that String never panics, is idempotent, and never leaves a planted
// credential of a known shape, whatever text surrounds it.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a b", "x=1", "--token", "Authorization:", "-----BEGIN PRIVATE KEY-----", "€ é", `"`, "'", `\"`,
		"mysql", "curl -u", "https://a:b@", "PGPASSWORD=", "Bearer", "sk-", "token: \"", "-----END PRIVATE KEY-----"} {
		f.Add(s, s, uint8(0))
	}
	secrets := []struct{ text, value string }{
		{"PGPASSWORD=Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{"--password=Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{"--token Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{"Authorization: Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{"Bearer Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{`"api_key": "Zq9xS3cr3tVal"`, "Zq9xS3cr3tVal"},
		{"https://bob:Zq9xS3cr3tVal@example.com", "Zq9xS3cr3tVal"},
		{"ghp_Zq9xS3cr3tValZq9xS3cr3tValZq9xS3cr3tVal", "Zq9xS3cr3tValZq9xS3cr3tVal"},
		{"xoxb-Zq9xS3cr3tVal", "Zq9xS3cr3tVal"},
		{"AKIAZQ9XS3CR3TVAL123", "ZQ9XS3CR3TVAL123"},
		{"sk-ant-api03-Zq9xS3cr3tValZq9xS3cr3tVal", "Zq9xS3cr3tValZq9xS3cr3tVal"},
		{"sk-proj-Zq9xS3cr3tValZq9xS3cr3tVal", "Zq9xS3cr3tValZq9xS3cr3tVal"},
		{"glpat-Zq9xS3cr3tValZq9xS3cr3tVal", "Zq9xS3cr3tValZq9xS3cr3tVal"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJaOXhTM2NyM3RWYWwifQ.Zq9xS3cr3tValSig", "eyJzdWIiOiJaOXhTM2NyM3RWYWwifQ"},
		{"-----BEGIN RSA PRIVATE KEY-----\nZq9xS3cr3tVal\n-----END RSA PRIVATE KEY-----", "Zq9xS3cr3tVal"},
	}
	// A credential is planted on a line of its own (as in a log or a script); text glued to
	// it on the same line can change what it is (--token "api_key": "x").
	seps := []string{"\n", "\r\n", "\n\n"}
	f.Fuzz(func(t *testing.T, before, after string, sep uint8) {
		out := String(before)
		if String(out) != out {
			t.Fatalf("not idempotent on %q:\n%q\n%q", before, out, String(out))
		}
		s := seps[int(sep)%len(seps)]
		for _, sec := range secrets {
			in := before + s + sec.text + s + after
			got := String(in)
			if strings.Contains(got, sec.value) && !strings.Contains(before+after, sec.value[:8]) {
				t.Fatalf("credential %q survived in %q", sec.text, got)
			}
			if again := String(got); again != got {
				t.Fatalf("not idempotent on %q:\n%q\n%q", in, got, again)
			}
		}
		// A key of a known shape is one whatever shares its line.
		for _, key := range []string{"sk-ant-api03-Zq9xS3cr3tValZq9xS3cr3tVal", "ghp_Zq9xS3cr3tValZq9xS3cr3tValZq9xS3cr3tVal",
			"AKIAZQ9XS3CR3TVAL123", "glpat-Zq9xS3cr3tValZq9xS3cr3tVal", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJaOXhTM2NyM3RWYWwifQ.sig"} {
			in := before + " " + key + " " + after
			got := String(in)
			if strings.Contains(got, key[len(key)-12:]) && !strings.Contains(before+after, key[len(key)-12:]) {
				t.Fatalf("key %q survived in %q", key, got)
			}
		}
	})
}

// FuzzWriter checks that a stream cut anywhere gives what String gives line by line, and
// that an injected value never survives.
func FuzzWriter(f *testing.F) {
	f.Add("hello secret world\nPGPASSWORD=x\n", "secret", 3)
	f.Add("sesecretcret", "secret", 1)
	f.Fuzz(func(t *testing.T, text, secret string, chunk int) {
		if len(secret) < 4 || chunk <= 0 || strings.ContainsAny(secret, "\r\n") || strings.Contains(Marker, secret) {
			return
		}
		var out bytes.Buffer
		w := NewWriter(&out, []string{secret})
		for i := 0; i < len(text); i += chunk {
			w.Write([]byte(text[i:min(i+chunk, len(text))]))
		}
		w.Flush()
		if strings.Contains(out.String(), secret) {
			t.Fatalf("secret %q leaked from %q: %q", secret, text, out.String())
		}
	})
}

// FuzzArgvAndJSON checks that the structured forms never panic and are idempotent, and
// that JSON stays valid.
func FuzzArgvAndJSON(f *testing.F) {
	f.Add("mysql\x00--password\x00hunter2")
	f.Add("curl\x00-u\x00bob:pw\x00-H\x00Authorization: Bearer x")
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		once := Argv(argv)
		if len(once) != len(argv) {
			t.Fatalf("Argv changed the number of words: %q -> %q", argv, once)
		}
		if twice := Argv(once); strings.Join(twice, "\x00") != strings.Join(once, "\x00") {
			t.Fatalf("Argv not idempotent: %q -> %q -> %q", argv, once, twice)
		}
		b, err := JSON(map[string]any{"argv": argv, "text": s, s: s})
		if err != nil || !json.Valid(b) {
			t.Fatalf("JSON: %v %s", err, b)
		}
		again, err := RawJSON(b)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("JSON not idempotent:\n%s\n%s", b, again)
		}
	})
}

// TestIdempotentOnTokenSoup redacts long random mixes of the pieces the rules look for
// (names, separators, quotes, markers, key prefixes): each result is a fixed point.
func TestIdempotentOnTokenSoup(t *testing.T) {
	toks := []string{"a", "=", " ", "\n", "\"", "'", "\\", "token", "--password", "Bearer", "Basic", "://", "@", ":", "-----BEGIN PRIVATE KEY-----",
		"-----END PRIVATE KEY-----", "mysql", "-p", "curl", "-u", "x:y", "sk-", "aaaaaaaaaaaaaaaaaaaaaaaa", "eyJ", ".", M, "$X", "${", "}", ";", "|", "Cookie:", "=>"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var b strings.Builder
		for range r.IntN(2000) {
			b.WriteString(toks[r.IntN(len(toks))])
		}
		s := b.String()
		if out := String(s); String(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
	}
}
