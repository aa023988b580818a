package vminstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/airlock-app/airlock/sandbox/lazyre"
)

// Artifact kinds. The runtime is downloaded in the "runtime" stage, the others in the
// "image" stage.
const (
	KindRuntime = "runtime" // the QEMU binary for the host (skipped when a system QEMU is usable)
	KindKernel  = "kernel"  // the guest kernel (vmlinuz)
	KindInitrd  = "initrd"  // the guest initramfs (optional)
	KindRootfs  = "rootfs"  // the guest root filesystem (qcow2 or raw)
)

// maxManifestBytes bounds the manifest read: it is a short JSON document.
const maxManifestBytes = 1 << 20

// Artifact is one downloadable file of the runtime or the image.
type Artifact struct {
	Name    string `json:"name"`           // file name on disk: letters, digits, '.', '_', '-'
	Kind    string `json:"kind"`           // runtime | kernel | initrd | rootfs
	Arch    string `json:"arch,omitempty"` // GOARCH it is for ("" = any)
	Version string `json:"version"`        // version of this artifact, shown to the person
	URL     string `json:"url"`            // absolute, or relative to the manifest's URL
	SHA256  string `json:"sha256"`         // lowercase hex digest of the whole file
	Size    int64  `json:"size"`           // exact size in bytes
}

// Manifest lists the artifacts of a runtime and image release.
type Manifest struct {
	Name      string     `json:"name"`
	Version   string     `json:"version"`
	Artifacts []Artifact `json:"artifacts"`
}

var (
	artifactNameRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	sha256RE       = lazyre.New(`^[0-9a-f]{64}$`)
)

// ParseManifest decodes and validates a manifest. base (the manifest's own URL, may be
// nil) resolves relative artifact URLs, so a manifest served beside its artifacts can name
// them by file name.
func ParseManifest(data []byte, base *url.URL) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w (expected {\"name\",\"version\",\"artifacts\":[{\"name\",\"kind\",\"version\",\"url\",\"sha256\",\"size\"}]})", err)
	}
	if len(m.Artifacts) == 0 {
		return Manifest{}, errors.New("manifest: no artifacts listed")
	}
	seen := map[string]bool{}
	for i := range m.Artifacts {
		a := &m.Artifacts[i]
		if !artifactNameRE().MatchString(a.Name) || a.Name == "installed.json" || strings.HasSuffix(a.Name, ".part") {
			return Manifest{}, fmt.Errorf("manifest: artifact %d: name %q must be a plain file name (letters, digits, '.', '_', '-'), not ending in .part", i, a.Name)
		}
		key := a.Kind + "/" + a.Name
		if seen[key] {
			return Manifest{}, fmt.Errorf("manifest: artifact %q of kind %q listed twice", a.Name, a.Kind)
		}
		seen[key] = true
		switch a.Kind {
		case KindRuntime, KindKernel, KindInitrd, KindRootfs:
		default:
			return Manifest{}, fmt.Errorf("manifest: artifact %q: kind %q is not one of runtime, kernel, initrd, rootfs", a.Name, a.Kind)
		}
		a.SHA256 = strings.ToLower(a.SHA256)
		if !sha256RE().MatchString(a.SHA256) {
			return Manifest{}, fmt.Errorf("manifest: artifact %q: sha256 %q is not 64 hex digits", a.Name, a.SHA256)
		}
		if a.Size <= 0 {
			return Manifest{}, fmt.Errorf("manifest: artifact %q: size %d must be positive", a.Name, a.Size)
		}
		u, err := url.Parse(a.URL)
		if err != nil || a.URL == "" {
			return Manifest{}, fmt.Errorf("manifest: artifact %q: url %q is not a URL", a.Name, a.URL)
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		switch u.Scheme {
		case "http", "https", "file":
		default:
			return Manifest{}, fmt.Errorf("manifest: artifact %q: url %q must be http(s):// or file:// (or relative to the manifest)", a.Name, a.URL)
		}
		a.URL = u.String()
	}
	return m, nil
}

// ManifestURL turns what a person typed (a URL or a local path) into a URL.
func ManifestURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("no manifest URL: pass --manifest URL to `airlock sandbox install` (http(s)://, file:// or the path of the manifest.json `make sandbox-image` writes), or start Airlock with AIRLOCK_SANDBOX_MANIFEST=URL")
	}
	if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file") {
		return u, nil
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return nil, fmt.Errorf("manifest path %q: %w", s, err)
	}
	return &url.URL{Scheme: "file", Path: abs}, nil
}

// FetchManifest reads and validates the manifest at u (http(s) or file).
func FetchManifest(ctx context.Context, client *http.Client, u *url.URL) (Manifest, error) {
	body, _, err := openSource(ctx, client, u.String(), 0)
	if err != nil {
		return Manifest{}, fmt.Errorf("fetch manifest %s: %w", u, err)
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxManifestBytes+1))
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest %s: %w", u, err)
	}
	if len(data) > maxManifestBytes {
		return Manifest{}, fmt.Errorf("manifest %s is larger than %d bytes", u, maxManifestBytes)
	}
	return ParseManifest(data, u)
}

// forArch returns the artifacts of kinds that apply to arch.
func (m Manifest) forArch(arch string, kinds ...string) []Artifact {
	var out []Artifact
	for _, a := range m.Artifacts {
		if a.Arch != "" && a.Arch != arch {
			continue
		}
		for _, k := range kinds {
			if a.Kind == k {
				out = append(out, a)
			}
		}
	}
	return out
}

// localPath converts a file:// URL to a path.
func localPath(u *url.URL) (string, error) {
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URL %s names a remote host", u)
	}
	if u.Path == "" {
		return "", fmt.Errorf("file URL %s has no path", u)
	}
	return filepath.FromSlash(u.Path), nil
}
