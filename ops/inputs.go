package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/airlock-app/airlock/api"
	"io"
	"os"
	"path/filepath"
)

// FieldInputs names drift of a plan's input files in a [DriftError].
const FieldInputs = "inputs"

const maxInputFile = 64 << 20

// InputDigest is the sha256 of one of a plan's input files.
type InputDigest = api.InputDigest

// digestInputs hashes the plan's input files, in plan order.
func digestInputs(workdir string, inputs []string) ([]InputDigest, error) {
	out := make([]InputDigest, 0, len(inputs))
	for _, in := range inputs {
		path := in
		if !filepath.IsAbs(path) {
			path = filepath.Join(workdir, path)
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return nil, &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("input %s cannot be read: %v", in, err)}
		}
		out = append(out, InputDigest{Path: in, SHA256: sum})
	}
	return out, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxInputFile+1))
	if err != nil {
		return "", err
	}
	if n > maxInputFile {
		return "", fmt.Errorf("%s is larger than %d MiB", path, maxInputFile>>20)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func encodeDigests(d []InputDigest) string {
	if len(d) == 0 {
		return ""
	}
	b, _ := json.Marshal(d)
	return string(b)
}

func decodeDigests(s string) []InputDigest {
	var d []InputDigest
	if s != "" {
		_ = json.Unmarshal([]byte(s), &d)
	}
	return d
}

// compareDigests says which input differs between what was pinned and what is there now.
func compareDigests(pinned, now []InputDigest, since string) *DriftError {
	if len(pinned) != len(now) {
		return &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("the plan's input files are not the ones pinned %s", since)}
	}
	for i := range now {
		if pinned[i].Path != now[i].Path {
			return &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("input %s is not the one pinned %s", now[i].Path, since)}
		}
		if pinned[i].SHA256 != now[i].SHA256 {
			return &DriftError{Field: FieldInputs, Detail: fmt.Sprintf("input %s changed %s (sha256 %s… is now %s…)",
				now[i].Path, since, pinned[i].SHA256[:12], now[i].SHA256[:12])}
		}
	}
	return nil
}
