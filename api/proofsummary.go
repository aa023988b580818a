package api

// ProofSummary is how a person at a terminal proves presence when answering what only a
// person may answer ([approvals] terminal_proof): Status.Approvals, and the answer of GET
// /v1/approvals/proof.
type ProofSummary struct {
	// TerminalProof is os (the login password, checked by PAM in the core) or tty (the
	// weaker choice: having a terminal is enough).
	TerminalProof string `json:"terminal_proof"`
	// PAMService and PAMSource name the PAM service used under os, and why it was chosen.
	PAMService string `json:"pam_service,omitempty"`
	PAMSource  string `json:"pam_source,omitempty"`
	// PAM is false when the core was built without PAM: under os, only the window can
	// then answer what needs a person.
	PAM bool `json:"pam"`
	// Note says what the choice means.
	Note string `json:"note"`
}
