// Command airlock is Airlock's command line. It links no GTK or WebKit, so that the
// sandbox's hot paths (`airlock exec`, `airlock hook`) start in about a millisecond.
package main

import (
	"context"
	"os"

	"github.com/airlock-app/airlock/app/cli"
	"github.com/airlock-app/airlock/sandbox"
)

func main() {
	// The Landlock backend re-executes airlock as a small inner stage that confines
	// itself and then becomes the command: it never reaches the CLI.
	sandbox.RunInnerStageIfRequested()
	os.Exit(cli.Execute(context.Background(), os.Args[1:]))
}
