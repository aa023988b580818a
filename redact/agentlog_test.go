package redact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The secrets planted in the agent log fixtures (testdata/agentlogs): an Anthropic key,
// a GitHub token, a bearer header (a JWT and an opaque value) and a password field.
var plantedSecrets = []string{
	"sk-ant-api03-Q7vKp2Xw9LmN4bRt6YzA1cDe8FgH3jKl5MnOp0QrS2tUv4WxY6zA8bCd0EfG2hIj4KlM6nOp8QrS-9uVwXyZAA",
	"ghp_R8kLm2Np4Qr6St8Uv0Wx2Yz4Ab6Cd8Ef0Gh",
	"Kq3mV9xZ2pL7wR4tY8uN1bC6dF0gH5jS",
	"opaqueBearerValue7Hq2Zm9",
	"Tr0ub4dor",
}

// jsonShape lists a document's keys and its numbers, in order: what redaction must keep.
func jsonShape(t *testing.T, line []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var shape []string
	var value func()
	value = func() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			shape = append(shape, v.String())
			for dec.More() {
				if v == '{' {
					k, _ := dec.Token()
					shape = append(shape, "key:"+k.(string))
				}
				value()
			}
			end, _ := dec.Token()
			shape = append(shape, end.(json.Delim).String())
		case json.Number:
			shape = append(shape, "num:"+v.String())
		}
	}
	value()
	return shape
}

func TestWriterKeepsAgentLogsJSON(t *testing.T) {
	files, err := filepath.Glob("testdata/agentlogs/*.jsonl")
	if err != nil || len(files) < 3 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// Whole, and in chunks that cut lines anywhere (as a pipe delivers them).
			for _, chunk := range []int{len(in), 4096, 7} {
				out := writeChunks(t, string(in), chunk, nil)
				inLines := strings.Split(strings.TrimSuffix(string(in), "\n"), "\n")
				outLines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(outLines) != len(inLines) {
					t.Fatalf("chunk %d: %d lines in, %d out", chunk, len(inLines), len(outLines))
				}
				for i, l := range outLines {
					if !json.Valid([]byte(l)) {
						t.Errorf("chunk %d: line %d is no longer JSON:\n%s", chunk, i+1, l)
						continue
					}
					if got, want := strings.Join(jsonShape(t, []byte(l)), " "), strings.Join(jsonShape(t, []byte(inLines[i])), " "); got != want {
						t.Errorf("chunk %d: line %d lost its keys or counts:\n got %s\nwant %s", chunk, i+1, got, want)
					}
				}
				for _, s := range plantedSecrets {
					if strings.Contains(out, s) {
						t.Errorf("chunk %d: %q survived:\n%s", chunk, s, out)
					}
				}
			}
		})
	}
}

func TestRawJSONKeepsCountsAndOrder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"input_tokens":12,"output_tokens":3}`, `{"input_tokens":12,"output_tokens":3}`},
		{`{"usage": {"cache_read_input_tokens": 40210, "max_tokens": 4096, "token_count": 7, "maxTokens": 1}}`,
			`{"usage": {"cache_read_input_tokens": 40210, "max_tokens": 4096, "token_count": 7, "maxTokens": 1}}`},
		{`{"z":1,"token":123456,"password":"hunter2","a":"x"}`, `{"z":1,"token":"[REDACTED]","password":"[REDACTED]","a":"x"}`},
		{`{"token":"$GH_TOKEN","password":"","auth":true,"session_key":null}`, `{"token":"$GH_TOKEN","password":"","auth":true,"session_key":null}`},
		{`{"authorization":"opaque-value","Cookie":"sid=abc"}`, `{"authorization":"[REDACTED]","Cookie":"[REDACTED]"}`},
		{`{"args":"{\"api_key\":\"k-999\",\"max_tokens\":5}"}`, `{"args":"{\"api_key\":\"[REDACTED]\",\"max_tokens\":5}"}`},
		{`["sk-ant-api03-abcdefghijklmnopqrstuvwxyz", 1]`, `["[REDACTED]", 1]`},
	} {
		got, err := RawJSON([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("RawJSON(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestTextKeepsCounts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"input_tokens":12,"output_tokens":3,"x`, `"input_tokens":12,"output_tokens":3,"x`},
		{`max_tokens: 4096`, `max_tokens: 4096`},
		{`TOKEN=123456`, `TOKEN=[REDACTED]`},
		{`"api_token":123456`, `"api_token":[REDACTED]`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzJSONStaysJSON checks that redacting a valid JSON document always gives valid JSON,
// that a second redaction changes nothing, and that a JSON line through the Writer stays
// JSON too.
func FuzzJSONStaysJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/agentlogs/*.jsonl")
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.Add(sc.Text(), "")
		}
		fh.Close()
	}
	f.Add(`{"a":"b","token":"x","n":[1,2,{"password":3}]}`, "x")
	f.Add(`{"k":"\u2028\"\\","input_tokens":1e3}`, "\\")
	f.Add(`[ "--password" , "p" ]`, "p")
	f.Fuzz(func(t *testing.T, doc, secret string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		out, err := RawJSON([]byte(doc))
		if err != nil {
			t.Fatalf("RawJSON(%q): %v", doc, err)
		}
		if !json.Valid(out) {
			t.Fatalf("RawJSON(%q) = %q: not JSON", doc, out)
		}
		if again, err := RawJSON(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", doc, out, again, err)
		}
		t0 := strings.TrimSpace(doc)
		if strings.ContainsAny(t0, "\r\n") || t0 == "" || (t0[0] != '{' && t0[0] != '[') {
			return
		}
		var secrets []string
		if len(secret) >= 4 && !strings.ContainsAny(secret, "\r\n") && !strings.Contains(Marker, secret) {
			secrets = []string{secret}
		}
		var b bytes.Buffer
		w := NewWriter(&b, secrets)
		w.Write([]byte(t0 + "\n"))
		w.Flush()
		line := strings.TrimSuffix(b.String(), "\n")
		if len(secrets) > 0 && strings.Contains(line, secret) {
			t.Fatalf("secret %q survived in %q", secret, line)
		}
		if !json.Valid([]byte(line)) && (len(secrets) == 0 || !strings.ContainsAny(secret, `{}[]:,"`)) {
			t.Fatalf("Writer turned %q into %q: not JSON", t0, line)
		}
	})
}
