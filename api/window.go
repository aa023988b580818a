package api

// ShowWindow brings the running window to the front: a second launch of the desktop app
// calls it. Only the window's process serves it.
var ShowWindow = route[None, Shown]("POST", "/v1/window/show")

// Shown is ShowWindow's answer.
type Shown struct {
	Shown bool `json:"shown"`
}
