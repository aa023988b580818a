//go:build !linux || !cgo

package app

import (
	"context"
	"fmt"
)

// pamAvailable: this core was built without cgo, so without PAM.
const pamAvailable = false

func pamAuthenticate(context.Context, string, string, string, string) error {
	return fmt.Errorf("%w: answer in the Airlock window", errNoPAM)
}

func pamPasswordless(context.Context, string, string, string) error {
	return fmt.Errorf("%w: answer in the Airlock window", errNoPAM)
}
