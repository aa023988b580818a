//go:build linux

package ops

import "github.com/airlock-app/airlock/ops/internal/swaptest"

func swapperMain() { swaptest.Main() }
