package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Argv redacts a command given as words. Each word is redacted like text, and a word is
// hidden whole when the one before it makes it a credential (--password hunter2 given as
// two words, sshpass -p hunter2, curl -u bob:hunter2). The result has as many words as
// argv; argv itself is not changed.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = String(a)
	}
	for i := 0; i+1 < len(argv); i++ {
		a, b := out[i], out[i+1]
		if b == "" || b == Marker || strings.Contains(a, Marker) {
			// A word already redacted holds its own secret (a header's value runs to the
			// end of its word, not into the next one).
			continue
		}
		// Judge the pair as one line: a flag and its value split over two words.
		joined := String(a + " " + b)
		if strings.HasSuffix(joined, " "+b) {
			continue
		}
		rest, ok := strings.CutPrefix(joined, a+" ")
		if !ok || strings.HasPrefix(rest, Marker) || strings.HasPrefix(rest[min(1, len(rest)):], Marker) {
			// The word is the value: hide it whole, even the part after a space.
			rest = Marker
		}
		out[i+1] = rest
	}
	newCmd := make([]bool, len(out))
	if len(out) > 0 {
		newCmd[0] = true
	}
	for i, r := range commandFlags(out, newCmd) {
		if r != "" {
			out[i] = r
		}
	}
	return out
}

var secretKey = regexp.MustCompile(`^(?:` + secretName + `)$`)

// JSON encodes v as JSON with every string redacted, every list of strings redacted as
// a command line ([Argv]) and the value of every secret-looking key replaced, so the
// result is still valid JSON.
func JSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("redact: encode: %w", err)
	}
	return RawJSON(b)
}

// RawJSON is JSON for a document already encoded: the document is kept as it is (its
// keys, their order, the punctuation and numbers that are counts), only the values
// holding credentials replaced. Invalid JSON is an error.
func RawJSON(b []byte) ([]byte, error) {
	out, ok := jsonRedactor{}.document(bytes.TrimSpace(b))
	if !ok {
		return nil, fmt.Errorf("redact: decode: not one valid JSON document")
	}
	return out, nil
}
