package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkExecTrue compares bare /bin/true, raw bwrap with Airlock's flags and
// Exec on both Linux backends, and Exec under bwrap with the network on (the run's own
// namespace connected out through slirp4netns); see also sandbox/bench/exec-bench.sh.
func BenchmarkExecTrue(b *testing.B) {
	for _, tc := range []struct{ name, backend string }{{"bare", ""}, {"raw-bwrap", ""}, {"Exec-bwrap", BackendNameBwrap}, {"Exec-bwrap-network", BackendNameBwrap}, {"Exec-landlock", BackendNameLandlock}} {
		b.Run(tc.name, func(b *testing.B) {
			p, _ := testPolicy(b, "workspace-write", tc.name == "Exec-bwrap-network")
			switch tc.name {
			case "bare":
				for i := 0; i < b.N; i++ {
					if err := exec.Command("/bin/true").Run(); err != nil {
						b.Fatal(err)
					}
				}
			case "raw-bwrap":
				args, err := BwrapArgs(p, nil, "")
				if err != nil {
					b.Fatal(err)
				}
				args = append(args, "--", "/bin/true")
				for i := 0; i < b.N; i++ {
					if err := exec.Command(bwrapPath(), args...).Run(); err != nil {
						b.Fatal(err)
					}
				}
			default:
				forcedBackend = tc.backend
				defer func() { forcedBackend = "" }()
				for i := 0; i < b.N; i++ {
					res, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"/bin/true"}})
					if err != nil || res.ExitCode != 0 {
						b.Fatal(res, err)
					}
				}
			}
		})
	}
}
