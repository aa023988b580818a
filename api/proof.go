package api

// Proof is what a terminal caller sends, beside an act only a person may do, to prove
// that a person does it. The core decides from it and from how the request arrived
// (the unix socket's peer), never from what the caller claims.
type Proof struct {
	// Password is the login password, typed on /dev/tty with echo off
	// ([approvals] terminal_proof = "os"); the core checks it with PAM.
	Password string `json:"password,omitempty"`
	// Confirmation is what was typed at the terminal (terminal_proof = "tty"): the
	// request id's first characters, the plan hash's or the directory's name.
	Confirmation string `json:"confirmation,omitempty"`
}
