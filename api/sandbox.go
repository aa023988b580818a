package api

// GetSandboxStatus is the start-up probes' result: the backend runs use, what it
// guarantees, and what to do about each missing piece. 503 CodeProbing while they run.
var GetSandboxStatus = route[None, SandboxStatus]("GET", "/v1/sandbox/status")

// The micro-VM installer's routes. Progress is published as "sandbox.install" events
// (a VMStatus each).
var (
	// GetVMStatus is the installer's status, after the core's start-up probe.
	GetVMStatus = route[None, VMStatus]("GET", "/v1/sandbox/vm")
	// InstallVM starts installing the runtime and image in the background, or joins the
	// install already running, and answers the status at once.
	InstallVM = route[VMInstallIn, VMStatus]("POST", "/v1/sandbox/vm/install")
	// CancelVMInstall stops the running install; the next one resumes the download.
	CancelVMInstall = route[None, VMStatus]("POST", "/v1/sandbox/vm/cancel")
)

// SandboxProbe is one start-up check of the machine's isolation features.
type SandboxProbe struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Fix is a sentence saying what to do when OK is false.
	Fix string `json:"fix,omitempty"`
}

// SandboxStatus is what `airlock sandbox status` and the Sandbox tab show.
type SandboxStatus struct {
	Platform string         `json:"platform"`
	Probes   []SandboxProbe `json:"probes"`
	// Requested is the configured isolation backend (auto, os, app).
	Requested string `json:"requested"`
	// Backend is what commands will run under: bwrap, landlock, seatbelt or app.
	Backend string `json:"backend"`
	// Warning is a loud sentence when commands fall back to the application layer.
	Warning string `json:"warning,omitempty"`
	// Error is set when backend "os" is requested and none is available: runs are refused.
	Error string `json:"error,omitempty"`
	// Guarantees are the promises that hold with Backend; Limitations those that do not.
	Guarantees  []string `json:"guarantees"`
	Limitations []string `json:"limitations,omitempty"`
	// Indicator is the sandbox in one colour and a few words, for the policy in force now
	// (the global sandbox_mode and network_access with this machine's probes).
	Indicator SandboxIndicator `json:"indicator"`
}

// Indicator levels, worst last.
const (
	// IndicatorGreen: every promise of the policy in force holds.
	IndicatorGreen = "green"
	// IndicatorAmber: commands are confined, but a guarantee is missing (Reasons says which).
	IndicatorAmber = "amber"
	// IndicatorRed: commands are not sandboxed (full-access, the app-only backend), or
	// cannot run at all (backend "os" with no OS backend).
	IndicatorRed = "red"
)

// SandboxIndicator is what the footer, the tray icon and `airlock status` say about the
// sandbox: computed once (sandbox.Indicate), shown everywhere alike.
type SandboxIndicator struct {
	// Level is IndicatorGreen, IndicatorAmber or IndicatorRed.
	Level string `json:"level"`
	// Words is the short label: "bubblewrap", "Landlock (degraded)", "not sandboxed".
	Words string `json:"words"`
	// Reasons are the missing guarantees, a sentence each (none when green).
	Reasons []string `json:"reasons,omitempty"`
	// Fix is the way out of the first reason.
	Fix string `json:"fix,omitempty"`
}

// Probe returns the probe with that name (zero SandboxProbe if absent).
func (s SandboxStatus) Probe(name string) SandboxProbe {
	for _, p := range s.Probes {
		if p.Name == name {
			return p
		}
	}
	return SandboxProbe{}
}

// VMInstallIn is what InstallVM takes.
type VMInstallIn struct {
	// Manifest is the manifest's URL (http(s)://, file://) or absolute path; "" is the
	// one the core was started with ($AIRLOCK_SANDBOX_MANIFEST).
	Manifest string `json:"manifest,omitempty"`
}

// VMProgress is where an install stands. Received and Total count the bytes of the
// current stage's artifacts (all of them, not only the current file).
type VMProgress struct {
	Stage    string `json:"stage"`              // detect | runtime | image | ready
	Artifact string `json:"artifact,omitempty"` // the file being downloaded
	Received int64  `json:"received"`
	Total    int64  `json:"total"`
	Percent  int    `json:"percent"` // 0..100 of the stage
}

// VMStatus is the micro-VM installer's status: what the Sandbox tab and `airlock sandbox
// status` show, and the payload of the "sandbox.install" events.
type VMStatus struct {
	Supported    bool       `json:"supported"`
	RuntimeReady bool       `json:"runtime_ready"`
	ImageReady   bool       `json:"image_ready"`
	Downloading  bool       `json:"downloading"`
	Progress     VMProgress `json:"progress"`
	Error        string     `json:"error,omitempty"`
	Support      VMSupport  `json:"support"`           // what the host offers
	Runtime      string     `json:"runtime,omitempty"` // QEMU binary the runner uses
	Version      string     `json:"version,omitempty"` // installed image version
}

// Ready reports whether a VM can be started.
func (s VMStatus) Ready() bool { return s.Supported && s.RuntimeReady && s.ImageReady }

// VMSupport is what the host offers for the micro-VM.
type VMSupport struct {
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Supported   bool   `json:"supported"`
	Reason      string `json:"reason,omitempty"`       // why not supported, with the way out
	KVM         bool   `json:"kvm"`                    // /dev/kvm opens read-write
	Accel       string `json:"accel"`                  // kvm | hvf | tcg
	Warning     string `json:"warning,omitempty"`      // e.g. TCG is slow
	QEMUBinary  string `json:"qemu_binary"`            // qemu-system-<arch> name for this host
	SystemQEMU  string `json:"system_qemu,omitempty"`  // path of a usable system QEMU, "" when none
	QEMUVersion string `json:"qemu_version,omitempty"` // e.g. "7.2.18"
}
