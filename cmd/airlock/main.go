// Command airlock is Airlock's command line. It links no GTK or WebKit, so that the
// sandbox's hot paths (`airlock exec`, `airlock hook`) start in about a millisecond.
package main

import (
	"context"
	"os"

	"github.com/airlock-app/airlock/app/cli"
)

func main() {
	os.Exit(cli.Execute(context.Background(), os.Args[1:]))
}
