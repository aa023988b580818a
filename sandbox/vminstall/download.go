package vminstall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// ErrCorrupt marks an artifact whose size or sha256 does not match the manifest.
var ErrCorrupt = errors.New("artifact does not match the manifest")

// downloadAttempts bounds the resumed retries within one download.
const downloadAttempts = 4

// fetcher downloads one artifact to its final path through a .part file.
type fetcher struct {
	client   *http.Client
	progress func(received int64) // bytes of this artifact on disk so far
	retryGap time.Duration
}

// fetch downloads a to dest: it resumes dest.part when present, verifies size and sha256,
// then renames atomically. A mismatching file is removed and never renamed.
func (f *fetcher) fetch(ctx context.Context, a Artifact, dest string) error {
	part := dest + ".part"
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dest), err)
	}
	h := sha256.New()
	have, err := f.rehashPart(part, a.Size, h)
	if err != nil {
		return err
	}
	f.progress(have)
	var lastErr error
	for attempt := 0; attempt < downloadAttempts && have < a.Size; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * f.retryGap):
			}
		}
		var progressed bool
		have, progressed, lastErr = f.stream(ctx, a, part, have, h)
		if lastErr == nil || ctx.Err() != nil {
			break
		}
		if progressed {
			attempt = 0 // a download that moves forward keeps its retries
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(lastErr, ErrCorrupt) {
		os.Remove(part)
		return fmt.Errorf("%s: %w; the file was deleted", a.Name, lastErr)
	}
	if have < a.Size {
		return fmt.Errorf("download %s from %s: stopped at %d of %d bytes (run the install again to resume): %w", a.Name, a.URL, have, a.Size, lastErr)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if have != a.Size || got != a.SHA256 {
		os.Remove(part)
		return fmt.Errorf("%s from %s: got %d bytes sha256 %s, the manifest says %d bytes sha256 %s; the file was deleted, check the manifest or the server and install again: %w",
			a.Name, a.URL, have, got, a.Size, a.SHA256, ErrCorrupt)
	}
	mode := os.FileMode(0o644)
	if a.Kind == KindRuntime {
		mode = 0o755
	}
	if err := os.Chmod(part, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", part, err)
	}
	if err := os.Rename(part, dest); err != nil {
		return fmt.Errorf("install %s: %w", dest, err)
	}
	syncDir(filepath.Dir(dest))
	return nil
}

// rehashPart feeds an existing .part into h and returns its length; a .part longer than the
// artifact is thrown away.
func (f *fetcher) rehashPart(part string, size int64, h hash.Hash) (int64, error) {
	pf, err := os.Open(part)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", part, err)
	}
	defer pf.Close()
	st, err := pf.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", part, err)
	}
	if st.Size() > size {
		pf.Close()
		return 0, os.Remove(part)
	}
	n, err := io.Copy(h, pf)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", part, err)
	}
	return n, nil
}

// stream appends the source from offset have to part. It returns the new length and
// whether any byte arrived.
func (f *fetcher) stream(ctx context.Context, a Artifact, part string, have int64, h hash.Hash) (int64, bool, error) {
	body, start, err := openSource(ctx, f.client, a.URL, have)
	if err != nil {
		return have, false, err
	}
	defer body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if start == 0 && have > 0 { // the server ignored the range: start over
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		h.Reset()
		have = 0
		f.progress(0)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return have, false, fmt.Errorf("open %s: %w", part, err)
	}
	before := have
	buf := make([]byte, 256<<10)
	var werr error
	for have < a.Size {
		n, rerr := body.Read(buf)
		if n > 0 {
			if int64(n) > a.Size-have { // more than the manifest says: corrupt, keep only what fits
				n = int(a.Size - have)
				rerr = fmt.Errorf("%s is larger than the manifest's %d bytes: %w", a.URL, a.Size, ErrCorrupt)
			}
			if _, werr = out.Write(buf[:n]); werr != nil {
				werr = fmt.Errorf("write %s: %w", part, werr)
				break
			}
			h.Write(buf[:n])
			have += int64(n)
			f.progress(have)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			werr = rerr
			break
		}
	}
	if err := out.Sync(); err != nil && werr == nil {
		werr = fmt.Errorf("sync %s: %w", part, err)
	}
	if err := out.Close(); err != nil && werr == nil {
		werr = fmt.Errorf("close %s: %w", part, err)
	}
	if werr == nil && have < a.Size {
		werr = io.ErrUnexpectedEOF
	}
	return have, have > before, werr
}

// syncDir makes a rename durable; failure only weakens durability, so it is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
