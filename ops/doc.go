// Package ops owns the infrastructure-change path: operation plans and their canonical
// hash, diffs, single-use approval tokens, apply, verify and the authenticated journal.
//
// The flow is plan → diff → approve → apply → verify, and every step is journaled:
//
//   - [Service.CreatePlan] (ops_plan) stores an [OperationPlan] and its canonical sha256
//     ([PlanHash]; the serialization is specified on [CanonicalBytes]).
//   - [Service.AttachDiff] (ops_diff) attaches the machine-checkable artifact, run read-only
//     or read from a file, with its sha256. No diff, no approval.
//   - [Service.Approve] (ops_approve) is interactive-only: it refuses unless a person
//     confirmed the first characters of the plan hash at a TTY or in the window. It mints a
//     single-use token (32 random bytes, base64url) returned exactly once and stored only as
//     its sha256, bound to the plan hash, valid 10 minutes by default and 60 at most.
//   - [Service.Apply] (ops_apply) redeems the token with one conditional UPDATE before
//     anything runs, snapshots before and after, runs the exact approved command and never
//     gives the token back.
//   - [Service.Verify] (ops_verify) runs the plan's read-only assertions, each checked
//     against a read-only allowlist ([ParseReadOnlyCommand]), and records the evidence.
//   - [Service.Journal] and [Service.VerifyJournal] (ops_journal) query and check the
//     append-only, hash-chained, HMAC-authenticated journal.
//
// Credentials are redacted (package redact) before anything is stored. Commands of a plan are
// stored exactly (what is hashed is what runs), so a plan whose commands carry a credential
// is refused instead, naming the field.
//
// A plan's input files (a migration script, a plan file) have their sha256 pinned when
// the diff is made; at approval each is read once and those bytes are kept in the state
// directory ([Config.StateDir], inputs/<sha256>). The apply runs on the copies: every
// mention of an input in the apply command is pointed at its copy ([RunSpec.CommandFor]),
// which the sandbox binds read-only into its private /tmp, so a file swapped after
// approval cannot change what runs; an input that changed since approval is drift, and so
// is another directory moved to the working directory's path (pinned by device and inode).
//
// The journal's head is also kept outside the database, in one HMAC'd anchor file in the
// state directory, so deleting a project's entries together with its head is reported as
// a truncation rather than verifying as an empty journal.
//
// The package reaches the outside world only through small interfaces taken by [New]:
// [Runner] (the sandbox; package ops/sandboxrunner implements it with sandbox.Exec, and
// [LocalRunner] is an unconfined fallback), [KeySource] (the secret store: the OS keyring or a file; see
// [StoredKeySource]), [Publisher] (the event bus) and a clock. Call [Service.Recover] (or
// use [Open]) when the app starts, so that an apply cut short by a crash is recorded.
package ops
