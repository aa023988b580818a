package vminstall

import "github.com/airlock-app/airlock/api"

// Topic is the event topic every status change is published on (the app puts an
// api.SandboxInstall on its bus for each).
const Topic = api.TopicSandboxInstall

// Stages of an install, in order.
const (
	StageDetect  = "detect"
	StageRuntime = "runtime"
	StageImage   = "image"
	StageReady   = "ready"
)

// Publisher receives status events; the app's event bus implements it. Publish must not
// block for long: it is called from the download loop.
type Publisher interface {
	Publish(topic string, payload any)
}

// Progress is where an install stands. Received and Total count the bytes of the current
// stage's artifacts (all of them, not only the current file).
type Progress struct {
	Stage    string `json:"stage"`              // detect | runtime | image | ready
	Artifact string `json:"artifact,omitempty"` // the file being downloaded
	Received int64  `json:"received"`
	Total    int64  `json:"total"`
	Percent  int    `json:"percent"` // 0..100 of the stage
}

// Status is what the Sandbox tab and `airlock sandbox status` show.
type Status struct {
	Supported    bool     `json:"supported"`
	RuntimeReady bool     `json:"runtimeReady"`
	ImageReady   bool     `json:"imageReady"`
	Downloading  bool     `json:"downloading"`
	Progress     Progress `json:"progress"`
	Error        string   `json:"error,omitempty"`
	Support      Support  `json:"support"`           // what Detect found
	Runtime      string   `json:"runtime,omitempty"` // QEMU binary the runner uses
	Version      string   `json:"version,omitempty"` // installed image version
}

// Ready reports whether a VM can be started.
func (s Status) Ready() bool { return s.Supported && s.RuntimeReady && s.ImageReady }

// percent is received/total in whole percent, 100 only when complete.
func percent(received, total int64) int {
	if total <= 0 {
		return 0
	}
	if received >= total {
		return 100
	}
	p := int(received * 100 / total)
	if p > 99 {
		p = 99
	}
	return p
}
