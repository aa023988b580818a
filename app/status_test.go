package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
)

// snakeKey is a JSON key of the wire: lower case words joined by underscores.
var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// jsonKeys collects every object key in v, each with its path ("config.loaded_at"). The
// values of config settings are the file's, not the wire's, and are not walked.
func jsonKeys(v any, path string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			out[p] = true
			if k != "value" {
				jsonKeys(child, p, out)
			}
		}
	case []any:
		for _, child := range x {
			jsonKeys(child, path+"[]", out)
		}
	}
}

// TestStatusRoutesSpeakSnakeCase: the status, config, sandbox status and micro-VM
// answers name every field in snake_case, on the API as in the window (one type).
func TestStatusRoutesSpeakSnakeCase(t *testing.T) {
	_, hc := runCore(t)
	for path, want := range map[string][]string{
		"/v1/status":         {"started_at", "paths.config_file", "paths.run_logs", "paths.sandbox_dir", "config.loaded_at", "approvals.terminal_proof", "keyring.ok"},
		"/v1/config":         {"loaded_at", "settings[].key", "settings[].layer"},
		"/v1/sandbox/status": {"requested", "backend", "probes[].name", "guarantees"},
		"/v1/sandbox/vm":     {"runtime_ready", "image_ready", "support.qemu_binary", "progress.stage"},
	} {
		resp, err := hc.Get("http://airlock" + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		keys := map[string]bool{}
		jsonKeys(v, "", keys)
		for k := range keys {
			last := k[strings.LastIndex(k, ".")+1:]
			if !snakeKey.MatchString(strings.TrimSuffix(last, "[]")) {
				t.Errorf("GET %s: key %s is not snake_case", path, k)
			}
		}
		for _, k := range want {
			if !keys[k] {
				t.Errorf("GET %s: no key %s in %s", path, k, raw)
			}
		}
	}
}

// TestVMInstallWithoutManifestIsRefusedAtOnce: with no manifest in the request and none
// configured, the install route and the window's call refuse at once, with the same
// error and the way out, and start no install that could only fail.
func TestVMInstallWithoutManifestIsRefusedAtOnce(t *testing.T) {
	c, _ := runCore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st := c.VMStatus(ctx); !st.Supported {
		t.Skipf("this machine cannot run the micro-VM: %s", st.Support.Reason)
	}
	client := localapi.NewClient(c.Paths.Socket)
	_, apiErr := localapi.Call(ctx, client, api.InstallVM, api.VMInstallIn{})
	_, windowErr := c.VMInstall(ctx, api.VMInstallIn{})
	for who, err := range map[string]error{"the route": apiErr, "the window": windowErr} {
		if !errors.Is(err, &api.Error{Code: api.CodeInvalid}) || !strings.Contains(err.Error(), "AIRLOCK_SANDBOX_MANIFEST") {
			t.Errorf("%s: %v, want a refusal (code %s) naming AIRLOCK_SANDBOX_MANIFEST", who, err, api.CodeInvalid)
		}
	}
	st, err := localapi.Call(ctx, client, api.GetVMStatus, api.None{})
	if err != nil || st.Downloading || st.Error != "" {
		t.Errorf("an install started anyway: %v %+v", err, st)
	}
}
