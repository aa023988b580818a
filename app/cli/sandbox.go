package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/policy"
	"github.com/airlock-app/airlock/sandbox"
	"github.com/airlock-app/airlock/sandbox/vminstall"
)

func newSandboxCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "sandbox", Short: "The sandbox's backends and their state on this machine"}
	var backend string
	status := &cobra.Command{
		Use:   "status",
		Short: "Probe bubblewrap, user namespaces, Landlock, seccomp and KVM, and say what to do about each missing piece",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var flags policy.Flags
			if backend != "" {
				flags.Sandbox.Backend = &backend
			}
			in, err := e.policyInputs(flags, "")
			if err != nil {
				return err
			}
			g, err := policy.Global(in) // the backend as every surface resolves it
			if err != nil {
				return err
			}
			requested := g.Backend
			st := sandbox.ProbeStatus(cmd.Context(), requested)
			st.Indicator = sandbox.Indicate(st, g)
			report := sandboxStatusReport{SandboxStatus: st, Network: g.Network.Describe() + " (" + g.Sources[sandbox.KeyNetwork].String() + ")"}
			if p, err := e.paths(); err == nil {
				vm := vminstall.New(vminstall.Config{Dir: p.SandboxDir}).Refresh(cmd.Context())
				report.MicroVM = &vm
			}
			err = e.print(report, func(w io.Writer) { printSandboxStatus(w, report) })
			if err == nil && st.Error != "" {
				return &exitError{code: ExitError, err: nil}
			}
			return err
		},
	}
	status.Flags().StringVar(&backend, "backend", "", "the backend setting to evaluate: auto | os | app (default: the effective one: AIRLOCK_SANDBOX_BACKEND, config.toml, or auto)")
	cmd.AddCommand(status, newSandboxInstallCmd(e))
	return cmd
}

// sandboxStatusReport is `airlock sandbox status`: the OS backends, and the micro-VM
// runtime and image of the sandbox execution mode.
type sandboxStatusReport struct {
	api.SandboxStatus
	// Network is the effective network_access in words, with the layer that set it.
	Network string        `json:"network,omitempty"`
	MicroVM *api.VMStatus `json:"micro_vm,omitempty"`
}

func printSandboxStatus(w io.Writer, r sandboxStatusReport) {
	st := r.SandboxStatus
	fmt.Fprintf(w, "backend   %s (requested: %s, platform %s)\n", st.Backend, st.Requested, st.Platform)
	fmt.Fprintf(w, "indicator %s\n", indicatorLine(st.Indicator))
	if st.Indicator.Fix != "" {
		fmt.Fprintf(w, "          way out: %s\n", st.Indicator.Fix)
	}
	if st.Error != "" {
		fmt.Fprintf(w, "ERROR     %s\n", st.Error)
	}
	if st.Warning != "" {
		fmt.Fprintf(w, "%s\n", st.Warning)
	}
	if r.Network != "" {
		fmt.Fprintf(w, "network   %s\n", r.Network)
	}
	fmt.Fprintln(w)
	for _, p := range st.Probes {
		mark := "ok  "
		if !p.OK {
			mark = "MISSING"
		}
		fmt.Fprintf(w, "  %-7s %-22s %s\n", mark, p.Name, p.Detail)
		if !p.OK && p.Fix != "" {
			fmt.Fprintf(w, "          %-22s → %s\n", "", p.Fix)
		}
	}
	if len(st.Guarantees) > 0 {
		fmt.Fprintln(w, "\nholds:")
		for _, g := range st.Guarantees {
			fmt.Fprintf(w, "  - %s\n", g)
		}
	}
	if len(st.Limitations) > 0 {
		fmt.Fprintln(w, "does not hold:")
		for _, l := range st.Limitations {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	if vm := r.MicroVM; vm != nil {
		fmt.Fprintf(w, "\nmicro-VM (execution_mode sandbox/auto): supported %v, runtime ready %v, image ready %v", vm.Supported, vm.RuntimeReady, vm.ImageReady)
		if vm.Downloading {
			fmt.Fprintf(w, ", downloading (%s %d%%)", vm.Progress.Stage, vm.Progress.Percent)
		}
		if vm.Support.Accel != "" {
			fmt.Fprintf(w, ", accelerator %s", vm.Support.Accel)
		}
		fmt.Fprintln(w)
		if vm.Support.Warning != "" {
			fmt.Fprintf(w, "  %s\n", vm.Support.Warning)
		}
		if vm.Error != "" {
			fmt.Fprintf(w, "  %s\n", vm.Error)
		}
		if !vm.ImageReady {
			fmt.Fprintln(w, "  → build an image with `make sandbox-image`, then `airlock sandbox install --manifest build/sandbox-image/manifest.json`")
		}
	}
}
