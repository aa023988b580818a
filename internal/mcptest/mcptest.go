// Package mcptest connects tests to an MCP server in memory: the server runs on one end
// of an in-memory transport, a client session on the other.
package mcptest

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an MCP server that serves one transport until its context ends.
type Server interface {
	Run(ctx context.Context, t mcp.Transport) error
}

// Connect runs srv in memory and returns a client session on it; both end with the test.
func Connect(tb testing.TB, srv Server) *mcp.ClientSession {
	tb.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

// CallText calls the tool name with args and returns the result and its text content
// joined; a failed call (not a tool error) fails the test.
func CallText(tb testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}
