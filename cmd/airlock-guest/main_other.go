//go:build !linux

// Command airlock-guest is Airlock's agent inside the Linux micro-VM; it only builds for Linux.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "airlock-guest runs inside the Linux micro-VM only")
	os.Exit(2)
}
