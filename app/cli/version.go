package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/app/buildinfo"
)

// versionInfo is what `airlock version --json` prints.
type versionInfo struct {
	Arch    string `json:"arch"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Version string `json:"version"`
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Airlock's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := versionInfo{Version: buildinfo.Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
			return e.print(v, func(w io.Writer) {
				fmt.Fprintf(w, "airlock %s (%s, %s/%s)\n", v.Version, v.Go, v.OS, v.Arch)
			})
		},
	}
}
