package vminstall

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// openSource opens rawURL for reading from byte offset. It returns the body and the offset
// the body really starts at: offset when the source honoured the range, 0 when it sent the
// whole file again (then the caller starts over).
func openSource(ctx context.Context, client *http.Client, rawURL string, offset int64) (io.ReadCloser, int64, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, 0, fmt.Errorf("url %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		p, err := localPath(u)
		if err != nil {
			return nil, 0, err
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, err
		}
		if offset > 0 {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				f.Close()
				return nil, 0, fmt.Errorf("seek %s to %d: %w", p, offset, err)
			}
		}
		return &ctxReader{ctx: ctx, r: f, c: f}, offset, nil
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, 0, err
		}
		if offset > 0 {
			req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
		}
		if client == nil {
			client = http.DefaultClient
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case offset > 0 && resp.StatusCode == http.StatusPartialContent:
			start, ok := contentRangeStart(resp.Header.Get("Content-Range"))
			if !ok || start != offset {
				resp.Body.Close()
				return nil, 0, fmt.Errorf("server answered range %d- with Content-Range %q", offset, resp.Header.Get("Content-Range"))
			}
			return resp.Body, offset, nil
		case resp.StatusCode == http.StatusOK:
			return resp.Body, 0, nil
		default:
			resp.Body.Close()
			return nil, 0, fmt.Errorf("GET %s: %s", rawURL, resp.Status)
		}
	default:
		return nil, 0, fmt.Errorf("url %q: scheme %q not supported (http, https, file)", rawURL, u.Scheme)
	}
}

// contentRangeStart parses "bytes START-END/TOTAL".
func contentRangeStart(h string) (int64, bool) {
	rest, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, false
	}
	startStr, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(startStr, 10, 64)
	return n, err == nil && n >= 0
}

// ctxReader stops a local file read when ctx is done, as an HTTP body does.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	c   io.Closer
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func (r *ctxReader) Close() error { return r.c.Close() }
