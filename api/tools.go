// Package api is the leaf of Airlock's wire contract: names that cross the local API,
// the MCP server and the hook adapter, declared once. It imports nothing of Airlock (no
// database, no Wails), so every executable shares it. The rest of the contract (the wire
// types, event payloads, error codes) is to move here too; see docs/ARCHITECTURE.md.
package api

import (
	"slices"
	"strings"
)

// Tool names: what a request's "tool" field says, the MCP server's tool names, and the
// tiers' and rules' keys.
const (
	ToolBash        = "bash"
	ToolExec        = "exec" // a run's own command, params {"argv": [...]}
	ToolReadFile    = "read_file"
	ToolWriteFile   = "write_file"
	ToolEditFile    = "edit_file"
	ToolListDir     = "list_dir"
	ToolSearchFiles = "search_files"
	ToolWebFetch    = "web_fetch"
	ToolWebSearch   = "web_search"

	ToolOpsPlan    = "ops_plan"
	ToolOpsDiff    = "ops_diff"
	ToolOpsApprove = "ops_approve"
	ToolOpsApply   = "ops_apply"
	ToolOpsVerify  = "ops_verify"
	ToolOpsJournal = "ops_journal"

	// ToolAuthorizeDirectory is the request a directory authorization raises.
	ToolAuthorizeDirectory = "authorize_directory"

	// ToolNetworkDomain is the request the egress proxy raises for a domain in neither
	// [network] list (network_access = "allowlist", ask_unknown), params
	// {"domain": "example.com", "port": 443}.
	ToolNetworkDomain = "network_domain"
)

// networkTools are the tools that reach the network from outside the sandbox (in the
// agent's process, or Airlock's): web fetches, web searches and code searches, as the
// agents and MCP servers name them.
var networkTools = []string{ToolWebFetch, ToolWebSearch, "code_search", "search_code", "web_code_search"}

// IsNetworkTool reports whether tool reaches the network by itself: web_fetch,
// web_search, a code-search tool, and the same names served by any MCP server
// ("mcp__github__search_code"). The sandbox's network setting governs them: refused with
// the network off, allowed by domain under an allowlist.
func IsNetworkTool(tool string) bool {
	return slices.Contains(networkTools, mcpToolName(tool))
}

// shellTools are the tools that run shell commands, as agents and MCP servers name them.
var shellTools = []string{ToolBash, ToolExec, "shell", "run_command", "run_shell_command"}

// IsShellTool reports whether tool runs shell commands (bash, exec, a shell tool of any
// MCP server: "mcp__x__shell"): at P0 any command would run without asking.
func IsShellTool(tool string) bool {
	return slices.Contains(shellTools, mcpToolName(tool))
}

// mcpToolName is the tool's own name in an MCP-qualified one ("mcp__github__search_code"
// → "search_code"); other names are returned as they are.
func mcpToolName(tool string) string {
	if i := strings.LastIndex(tool, "__"); strings.HasPrefix(tool, "mcp__") && i > len("mcp_") {
		return tool[i+2:]
	}
	return tool
}

// Tools lists every tool name above.
var Tools = []string{
	ToolBash, ToolExec, ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolSearchFiles, ToolWebFetch, ToolWebSearch,
	ToolOpsPlan, ToolOpsDiff, ToolOpsApprove, ToolOpsApply, ToolOpsVerify, ToolOpsJournal, ToolAuthorizeDirectory,
	ToolNetworkDomain,
}
