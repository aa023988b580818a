package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/proc"
	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// MappedCall is a coding agent's tool call in Airlock's terms.
type MappedCall struct {
	Tool   string         // Airlock's tool name
	Params map[string]any // Airlock's parameters for it
	// Governed is true for calls to Airlock's own MCP server, which asks the broker
	// itself: the hook lets them through instead of asking twice.
	Governed bool
}

// MapClaudeTool maps a Claude Code tool call (tool_name, tool_input) onto Airlock's
// tools. Tools Airlock has no name for keep their own name and input: the broker treats
// unknown tools as P1, so they ask unless a rule says otherwise. mcpServer is the name
// Airlock's MCP server is registered under in Claude Code ("airlock").
func MapClaudeTool(name string, input map[string]any, mcpServer string) MappedCall {
	str := func(k string) string { s, _ := input[k].(string); return s }
	put := func(m map[string]any, k string, from string) {
		if v, ok := input[from]; ok && v != nil {
			m[k] = v
		}
	}
	switch name {
	case "Bash":
		return MappedCall{Tool: api.ToolBash, Params: map[string]any{"command": str("command")}}
	case "Read":
		p := map[string]any{"path": str("file_path")}
		put(p, "offset", "offset")
		put(p, "limit", "limit")
		return MappedCall{Tool: api.ToolReadFile, Params: p}
	case "Write":
		return MappedCall{Tool: api.ToolWriteFile, Params: map[string]any{"path": str("file_path"), "content": str("content")}}
	case "Edit":
		p := map[string]any{"path": str("file_path"), "old_string": str("old_string"), "new_string": str("new_string")}
		put(p, "replace_all", "replace_all")
		return MappedCall{Tool: api.ToolEditFile, Params: p}
	case "MultiEdit":
		p := map[string]any{"path": str("file_path")}
		put(p, "edits", "edits")
		return MappedCall{Tool: api.ToolEditFile, Params: p}
	case "NotebookEdit":
		p := map[string]any{"path": str("notebook_path")}
		put(p, "new_string", "new_source")
		put(p, "cell_id", "cell_id")
		put(p, "edit_mode", "edit_mode")
		return MappedCall{Tool: api.ToolEditFile, Params: p}
	case "Glob":
		p := map[string]any{"path": str("path"), "glob": str("pattern")}
		return MappedCall{Tool: api.ToolSearchFiles, Params: p}
	case "Grep":
		p := map[string]any{"path": str("path"), "regex": str("pattern")}
		put(p, "glob", "glob")
		return MappedCall{Tool: api.ToolSearchFiles, Params: p}
	case "LS":
		return MappedCall{Tool: api.ToolListDir, Params: map[string]any{"path": str("path")}}
	case "WebFetch":
		return MappedCall{Tool: api.ToolWebFetch, Params: map[string]any{"url": str("url")}}
	case "WebSearch":
		p := map[string]any{"query": str("query")}
		put(p, "allowed_domains", "allowed_domains")
		put(p, "blocked_domains", "blocked_domains")
		return MappedCall{Tool: api.ToolWebSearch, Params: p}
	}
	if server, tool, ok := splitMCPName(name); ok {
		if mcpServer != "" && server == mcpServer && slices.Contains(ServedTools, tool) {
			return MappedCall{Tool: tool, Params: input, Governed: true}
		}
		return MappedCall{Tool: name, Params: input}
	}
	return MappedCall{Tool: name, Params: input}
}

// splitMCPName splits "mcp__server__tool".
func splitMCPName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// updatedClaudeInput maps parameters a before-hook rewrote back onto Claude Code's tool
// input. ok is false when the rewrite cannot be expressed for this tool.
func updatedClaudeInput(name string, input map[string]any, rewritten json.RawMessage) (map[string]any, bool) {
	var p map[string]any
	if json.Unmarshal(rewritten, &p) != nil {
		return nil, false
	}
	out := make(map[string]any, len(input))
	for k, v := range input {
		out[k] = v
	}
	switch name {
	case "Bash":
		cmd, ok := p["command"].(string)
		if !ok {
			return nil, false
		}
		out["command"] = cmd
		return out, true
	case "WebFetch":
		u, ok := p["url"].(string)
		if !ok {
			return nil, false
		}
		out["url"] = u
		return out, true
	}
	return nil, false
}

// AirlockMCPBeside reports whether Airlock's own MCP server runs beside the hook whose
// pid is self: a child of the agent that started the hook (the hook's parent, or the
// parent's parent when a shell ran the hook's command) that runs the very program the
// hook runs (the same executable file) as `mcp`. Claude Code starts both its hooks and
// its stdio MCP servers, so the real server is the hook's sibling (or its uncle); a
// server that only took the name "airlock", or a program named like Airlock's, is
// something else.
func AirlockMCPBeside(self int) bool {
	me, err := os.Stat("/proc/" + strconv.Itoa(self) + "/exe")
	if err != nil {
		return false
	}
	for _, a := range agentPIDs(self) {
		for _, c := range proc.Children(a) {
			if c == self {
				continue
			}
			if argv, err := proc.Cmdline(c); err == nil && len(argv) > 1 && argv[1] == "mcp" {
				if exe, err := os.Stat("/proc/" + strconv.Itoa(c) + "/exe"); err == nil && os.SameFile(me, exe) {
					return true
				}
			}
		}
	}
	return false
}

// ClaudeHeadless reports whether the agent that ran this hook (self's parent, or the
// parent's parent when a shell ran the hook's command) runs in print mode (claude -p,
// --print): headless, with no prompt of its own to ask in. Claude Code says so in
// neither the hook's input nor its environment, so its argument vector is read.
func ClaudeHeadless(self int) bool {
	for _, a := range agentPIDs(self) {
		argv, err := proc.Cmdline(a)
		if err != nil {
			continue
		}
		claude := false // the program is Claude Code's (claude, or node …/claude-code/cli.js)
		for _, arg := range argv {
			if arg == "--" {
				break
			}
			if strings.Contains(filepath.Base(arg), "claude") || strings.Contains(arg, "/claude-code/") {
				claude = true
			}
			if claude && (arg == "-p" || arg == "--print" || strings.HasPrefix(arg, "--print=")) {
				return true
			}
		}
	}
	return false
}

// agentPIDs are the processes that may be the agent that ran self: its parent, and the
// parent's parent when the parent is a shell (Claude Code runs a hook's command line
// through one).
func agentPIDs(self int) []int {
	parent, err := proc.ParentPID(self)
	if err != nil || parent <= 1 {
		return nil
	}
	agents := []int{parent}
	if argv, err := proc.Cmdline(parent); err == nil && isShell(argv) {
		if gp, err := proc.ParentPID(parent); err == nil && gp > 1 {
			agents = append(agents, gp)
		}
	}
	return agents
}

// isShell reports whether argv is a shell's (sh -c "airlock hook claude"): the one table
// of shells, shellcmd's.
func isShell(argv []string) bool {
	return len(argv) > 0 && shellcmd.IsShell(strings.TrimPrefix(filepath.Base(argv[0]), "-"))
}
