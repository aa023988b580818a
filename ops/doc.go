// Package ops owns the infrastructure-change path: operation plans and their canonical
// hash, diffs, single-use approval tokens, apply, verify and the authenticated journal.
package ops
