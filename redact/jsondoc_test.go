package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// The document is read, never written: the window redacts a request's parameters while
// the broker reads the same bytes.
func TestRawJSONLeavesItsInputAlone(t *testing.T) {
	for _, doc := range []string{
		`{"a":{"b":[1,2,{"c":"sk-ant-api03-` + strings.Repeat("x", 40) + `"}]},"d":[]}`,
		`[ {"token": "abc"} , [ [ ] ] ]`,
	} {
		in := make([]byte, len(doc), len(doc)+64) // room an append into it would use
		copy(in, doc)
		// Read while it is redacted: under -race a write into it is reported.
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 100 {
				_ = json.Valid(in)
			}
		}()
		for range 100 {
			if _, err := RawJSON(in); err != nil {
				t.Fatal(err)
			}
		}
		<-done
		if string(in) != doc {
			t.Fatalf("RawJSON changed its input:\n got %s\nwant %s", in, doc)
		}
	}
}
