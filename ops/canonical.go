package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// canonicalVersion heads every serialization; a change of the format changes it.
const canonicalVersion = "airlock-ops-plan/v1"

// CanonicalBytes returns the fixed serialization of the plan that [PlanHash]
// covers. It does not depend on JSON or map order. The format:
//
//	record  = header field*
//	header  = "airlock-ops-plan/v1\n"
//	field   = name " " len ":" value "\n"
//
// where name is the ASCII field name below, len the decimal byte length of value, and
// value the raw bytes (UTF-8 as given, no trimming or normalisation). Lists first emit a
// count field "<list>.count" whose value is the decimal count, then their elements' fields
// with the index in the name ("steps.0.effect"). Booleans are "true"/"false", integers
// decimal. Optional fields are always emitted (empty when unset), so every plan has the
// same fields in the same order:
//
//	project
//	target.provider target.account target.region target.device
//	intent
//	apply.kind ("argv" | "shell" | "") apply.argv.count apply.argv.<i>... apply.shell
//	snapshot.kind snapshot.argv.count snapshot.argv.<i>... snapshot.shell
//	diff.kind diff.argv.count diff.argv.<i>... diff.shell
//	workdir
//	network
//	timeout_seconds
//	steps.count, then per step i: steps.<i>.description steps.<i>.effect
//	    steps.<i>.reversibility steps.<i>.blast_radius steps.<i>.rollback
//	verify.count, then per assertion i: verify.<i>.name verify.<i>.command
//	    verify.<i>.expect_text verify.<i>.expect_exit (the effective value, 0 when unset)
//	inputs.count inputs.<i>...
//	confirm.kind confirm.argv.count confirm.argv.<i>... confirm.shell confirm_within_seconds
//	    (only when the plan has a confirm step: a plan without one hashes as it did
//	    before commit-confirm plans existed)
//
// (The contents of the input files are not part of the plan hash; their sha256 is pinned
// separately when the diff is attached and when the plan is approved.)
//
// The length prefix makes the encoding injective: no two different plans serialize to
// the same bytes, whatever characters their fields contain.
func CanonicalBytes(p *OperationPlan) []byte {
	e := canonicalEncoder{buf: make([]byte, 0, 2048+len(p.Steps)*256+len(p.Verify)*256)}
	e.buf = append(e.buf, canonicalVersion+"\n"...)
	e.field("project", p.Project)
	e.field("target.provider", p.Target.Provider)
	e.field("target.account", p.Target.Account)
	e.field("target.region", p.Target.Region)
	e.field("target.device", p.Target.Device)
	e.field("intent", p.Intent)
	e.command("apply", p.Apply)
	e.command("snapshot", p.Snapshot)
	e.command("diff", p.Diff)
	e.field("workdir", p.Workdir)
	e.field("network", strconv.FormatBool(p.Network))
	e.field("timeout_seconds", strconv.Itoa(p.TimeoutSeconds))
	e.field("steps.count", strconv.Itoa(len(p.Steps)))
	for i, s := range p.Steps {
		pre := "steps." + strconv.Itoa(i) + "."
		e.field(pre+"description", s.Description)
		e.field(pre+"effect", s.Effect)
		e.field(pre+"reversibility", string(s.Reversibility))
		e.field(pre+"blast_radius", string(s.BlastRadius))
		e.field(pre+"rollback", s.Rollback)
	}
	e.field("verify.count", strconv.Itoa(len(p.Verify)))
	for i, a := range p.Verify {
		pre := "verify." + strconv.Itoa(i) + "."
		e.field(pre+"name", a.Name)
		e.field(pre+"command", a.Command)
		e.field(pre+"expect_text", a.ExpectText)
		e.field(pre+"expect_exit", strconv.Itoa(a.WantExit()))
	}
	e.field("inputs.count", strconv.Itoa(len(p.Inputs)))
	for i, in := range p.Inputs {
		e.field("inputs."+strconv.Itoa(i), in)
	}
	// Last and only when set: the fields before are counted or length-prefixed, so the
	// encoding stays injective, and older plans keep their hash.
	if !p.Confirm.IsZero() || p.ConfirmWithinSeconds != 0 {
		e.command("confirm", p.Confirm)
		e.field("confirm_within_seconds", strconv.Itoa(p.ConfirmWithinSeconds))
	}
	return e.buf
}

// PlanHash is the plan's canonical sha256, lowercase hex, over [CanonicalBytes].
func PlanHash(p *OperationPlan) string {
	sum := sha256.Sum256(CanonicalBytes(p))
	return hex.EncodeToString(sum[:])
}

// componentHashes are the hashes of the parts whose drift Apply names.
type componentHashes struct {
	Apply, Snapshot, Workdir string
}

func components(p *OperationPlan) componentHashes {
	return componentHashes{
		Apply:    commandHash(p.Apply),
		Snapshot: commandHash(p.Snapshot),
		Workdir:  sha256Hex([]byte(p.Workdir)),
	}
}

func commandHash(c Command) string {
	var e canonicalEncoder
	e.command("command", c)
	return sha256Hex(e.buf)
}

type canonicalEncoder struct{ buf []byte }

func (e *canonicalEncoder) field(name, value string) {
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ' ')
	e.buf = strconv.AppendInt(e.buf, int64(len(value)), 10)
	e.buf = append(e.buf, ':')
	e.buf = append(e.buf, value...)
	e.buf = append(e.buf, '\n')
}

func (e *canonicalEncoder) command(name string, c Command) {
	e.field(name+".kind", c.Kind())
	e.field(name+".argv.count", strconv.Itoa(len(c.Argv)))
	for i, a := range c.Argv {
		e.field(name+".argv."+strconv.Itoa(i), a)
	}
	e.field(name+".shell", c.Shell)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
