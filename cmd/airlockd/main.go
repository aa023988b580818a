// Command airlockd hosts Airlock's core headless. People start it as `airlock daemon`,
// which becomes this process; it is separate so that the airlock command line links
// neither the database nor the core and starts in about a millisecond.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/airlock-app/airlock/app"
)

func main() {
	fs := flag.NewFlagSet("airlock daemon", flag.ContinueOnError)
	tcp := fs.String("tcp", "", "also listen on this loopback address (for example 127.0.0.1:7391), guarded by a bearer token kept in the secret store")
	asJSON := fs.Bool("json", false, "announce the start as one JSON line on stderr")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "airlock daemon: unexpected argument %q (see airlock daemon --help)\n", fs.Arg(0))
		os.Exit(2)
	}
	if err := app.RunDaemon(context.Background(), app.DaemonOptions{TCPAddress: *tcp, Stderr: os.Stderr, JSON: *asJSON}); err != nil {
		if *asJSON {
			out, _ := json.Marshal(map[string]any{"running": false, "error": err.Error()})
			fmt.Fprintln(os.Stderr, string(out))
		} else {
			fmt.Fprintf(os.Stderr, "airlock: %v\n", err)
		}
		os.Exit(1)
	}
}
