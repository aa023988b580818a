// Command airlock-agent is the agent side of Airlock's command line: `airlock mcp` and
// `airlock hook claude`, which `airlock` execs when it finds this binary beside it. It is
// the only executable of the command line that links the MCP SDK.
package main

import (
	"context"
	"os"

	"github.com/airlock-app/airlock/app/cli/agentcmd"
)

func main() {
	os.Exit(agentcmd.Execute(context.Background(), os.Args[1:]))
}
