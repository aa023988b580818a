//go:build !linux

package sandbox

// RunInnerStageIfRequested must be the first call in main; off Linux there is
// no inner stage and it returns at once.
func RunInnerStageIfRequested() {}
