package api

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestNetworkAccessReadsOldBooleans: what the boolean setting wrote (saved JSON, a
// request from an older client, a 0/1 column) still decodes; the names round-trip.
func TestNetworkAccessReadsOldBooleans(t *testing.T) {
	tests := []struct {
		in   string
		want NetworkAccess
	}{
		{`{"mode":"workspace-write","network":true}`, NetworkOn},
		{`{"mode":"workspace-write","network":false}`, NetworkOff},
		{`{"mode":"workspace-write","network":"allowlist"}`, NetworkAllowlist},
		{`{"mode":"workspace-write","network":"on"}`, NetworkOn},
		{`{"mode":"workspace-write","network":"off"}`, NetworkOff},
		{`{"mode":"workspace-write"}`, ""},
		{`{"mode":"workspace-write","network":null}`, ""},
	}
	for _, tt := range tests {
		var p PolicySummary
		if err := json.Unmarshal([]byte(tt.in), &p); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if p.Network != tt.want {
			t.Errorf("%s: network %q, want %q", tt.in, p.Network, tt.want)
		}
		out, _ := json.Marshal(p)
		var back PolicySummary
		if err := json.Unmarshal(out, &back); err != nil || back.Network.Norm() != tt.want.Norm() {
			t.Errorf("%s: round trip %s gives %q (%v)", tt.in, out, back.Network, err)
		}
	}
	// A department's defaults: absent stays "not set", a boolean is a choice.
	var d Defaults
	if err := json.Unmarshal([]byte(`{"sandbox_mode":"read-only","network":true}`), &d); err != nil || d.Network == nil || *d.Network != NetworkOn {
		t.Errorf("defaults with network true: %+v %v", d, err)
	}
	d = Defaults{}
	if err := json.Unmarshal([]byte(`{"sandbox_mode":"read-only"}`), &d); err != nil || d.Network != nil {
		t.Errorf("defaults without network: %+v %v", d, err)
	}
	// A run's recorded policy in the old shape.
	var rp RunPolicy
	if err := json.Unmarshal([]byte(`{"sandbox_mode":"workspace-write","network":true,"approval_policy":"on-request","backend":"auto","execution_mode":"local"}`), &rp); err != nil || rp.Network != NetworkOn {
		t.Errorf("run policy: %+v %v", rp, err)
	}
	if b, _ := json.Marshal(RunPolicy{}); string(b) != `{"sandbox_mode":"","network":"off","approval_policy":"","backend":"","execution_mode":""}` {
		t.Errorf("zero run policy marshals as %s", b)
	}
}

func TestNetworkAccessRefusesOtherValues(t *testing.T) {
	for _, in := range []string{`"maybe"`, `1`, `{}`, `"allow-list"`} {
		var n NetworkAccess
		err := json.Unmarshal([]byte(in), &n)
		if !errors.Is(err, ErrInvalidNetworkAccess) {
			t.Errorf("%s: %v, want ErrInvalidNetworkAccess", in, err)
		}
	}
	if _, err := ParseNetworkAccess("sometimes"); !errors.Is(err, ErrInvalidNetworkAccess) {
		t.Errorf("parse: %v", err)
	}
}

func TestNetworkAccessScansOldColumns(t *testing.T) {
	tests := []struct {
		src  any
		want NetworkAccess
	}{
		{int64(1), NetworkOn}, {int64(0), NetworkOff}, {true, NetworkOn}, {false, NetworkOff},
		{"1", NetworkOn}, {"0", NetworkOff}, {[]byte("allowlist"), NetworkAllowlist}, {"on", NetworkOn}, {nil, NetworkOff},
	}
	for _, tt := range tests {
		var n NetworkAccess
		if err := n.Scan(tt.src); err != nil || n != tt.want {
			t.Errorf("Scan(%#v) = %q, %v; want %q", tt.src, n, err, tt.want)
		}
	}
	var n NetworkAccess
	if err := n.Scan("maybe"); !errors.Is(err, ErrInvalidNetworkAccess) {
		t.Errorf("Scan(maybe) = %v", err)
	}
	if v, _ := NetworkAllowlist.Value(); v != "allowlist" {
		t.Errorf("Value = %v", v)
	}
}

func TestNetworkAccessOrderAndWords(t *testing.T) {
	if !(NetworkOff.Rank() < NetworkAllowlist.Rank() && NetworkAllowlist.Rank() < NetworkOn.Rank()) {
		t.Error("off < allowlist < on does not hold")
	}
	if NetworkAllowlist.On() || !NetworkOn.On() || NetworkOff.On() {
		t.Error("only on is on: an allowlist has no network until its proxy is connected")
	}
	if got := NetworkAllowlist.Describe(); got != "allowlist (only the allowed domains, through Airlock's egress proxy)" {
		t.Errorf("Describe = %q", got)
	}
}
