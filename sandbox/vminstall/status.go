package vminstall

import "github.com/airlock-app/airlock/api"

// Topic is the event topic every status change is published on.
const Topic = api.TopicSandboxInstall

// Stages of an install, in order.
const (
	StageDetect  = "detect"
	StageRuntime = "runtime"
	StageImage   = "image"
	StageReady   = "ready"
)

// Publisher receives every status change (the app puts them on its event bus under
// Topic). Publish must not block for long: it is called from the download loop.
type Publisher interface {
	Publish(st Status)
}

// Progress is where an install stands (the wire type).
type Progress = api.VMProgress

// Status is what the Sandbox tab and `airlock sandbox status` show (the wire type).
type Status = api.VMStatus

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
