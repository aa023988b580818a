package sandboxexec

import (
	"context"
	"testing"

	"github.com/airlock-app/airlock/dispatch"
)

// BenchmarkRunNowThroughSandbox measures a whole run of `true` under bwrap: RunNow →
// gate → approval → claim → sandbox.Exec → succeeded recorded.
func BenchmarkRunNowThroughSandbox(b *testing.B) {
	d, _, ws, _, _ := setup(b, "on-request")
	ctx := context.Background()
	tk, err := d.CreateTask(ctx, dispatch.TaskSpec{Name: "b", Cwd: ws, Argv: []string{"true"}, Overlap: dispatch.OverlapAllow})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := d.RunNow(ctx, tk.Name)
		if err != nil {
			b.Fatal(err)
		}
		wait(b, d, r.ID, dispatch.StatusSucceeded)
	}
}
