//go:build !linux

package ops

func swapperMain() {}
