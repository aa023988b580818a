//go:build unix && !linux

package agent

import "os/exec"

// Children tracks the commands the agent waits for itself (reaping is Linux-only).
type Children struct{}

// NewChildren returns an empty tracker.
func NewChildren() *Children { return &Children{} }

func (c *Children) start(cmd *exec.Cmd) error { return cmd.Start() }
func (c *Children) done(int)                  {}

// ReapOrphans does nothing outside Linux.
func (c *Children) ReapOrphans() int { return 0 }
