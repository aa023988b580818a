// Package fakemodel is, for tests only, a scripted model API on loopback that real agent
// CLIs talk to: Anthropic's Messages API (POST /v1/messages, streamed or not, as Claude
// Code calls it) and OpenAI's Responses API (POST /v1/responses, streamed, as Codex and
// opencode's openai provider call it). A script is a list of turns; each turn answers
// with one tool call or with final text. The fake records every request, so a test can read what the model was told (a
// tool's result, the person's reason for a denial).
//
// Which turn a request gets is read from the request itself (how many tool calls its
// conversation already holds), not from a counter: a CLI that retries a request, or
// sends requests of its own between the agent's turns (a title, a quota probe: requests
// that offer no tools), does not shift the script.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Turn is one answer of the model: a tool call when Tool is set, else the final Text.
type Turn struct {
	Tool string // the tool's name as the CLI offers it ("Bash", "bash")
	// Namespace is the OpenAI namespace tool that holds Tool ("mcp__airlock": Codex offers
	// an MCP server's tools as one namespace).
	Namespace string
	Input     map[string]any // the tool call's arguments
	// Freeform, when set, is the input of a freeform (custom) tool call in place of Input:
	// Codex's code mode takes its `exec` tool's JavaScript this way.
	Freeform string
	Text     string // the final answer when Tool is empty
}

// Request is one request the fake received.
type Request struct {
	Path   string
	Header http.Header
	Body   map[string]any
	// Tools are the names of the tools the request offered the model: those of the
	// request's tools and of its input's additional_tools items (Codex sends its code
	// mode's this way), each namespace's by their own names, and the tools a code mode
	// `exec` tool says it can call as "exec/NAME".
	Tools []string
	// Results are the texts of the tool results the request's conversation holds, in order.
	Results []string
	// Turn is the index of the script's turn the fake answered with; -1 for a request
	// outside the script (no tools offered, or past its end).
	Turn int
}

// Server is a running fake model API.
type Server struct {
	// URL is the server's base, "http://127.0.0.1:PORT"; the APIs are under /v1.
	URL    string
	script []Turn
	mu     sync.Mutex
	reqs   []Request
}

// Start serves script on a loopback port until the test ends.
func Start(t testing.TB, script []Turn) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script}
	srv := &http.Server{Handler: s}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// SetScript replaces the script (a test that must know the server's URL first starts it
// with none).
func (s *Server) SetScript(script []Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// ScriptRequests are the requests answered from the script (the agent's own turns).
func (s *Server) ScriptRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// LastResults are the tool results of the last scripted request: everything the model
// was told by the end of the run.
func (s *Server) LastResults() []string {
	rs := s.ScriptRequests()
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1].Results
}

// Turns is how many of the script's turns were answered (the highest turn index + 1).
func (s *Server) Turns() int {
	n := 0
	for _, r := range s.ScriptRequests() {
		n = max(n, r.Turn+1)
	}
	return n
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	path := r.URL.Path
	slog.Debug("fakemodel: request", "method", r.Method, "path", path)
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 10})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		req := s.record(r.Header, path, body, anthropicTools(body), anthropicResults(body), anthropicToolCalls(body))
		s.anthropic(w, body, req)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		req := s.record(r.Header, path, body, openAITools(body), openAIResults(body), openAIToolCalls(body))
		s.openAI(w, req)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		s.record(r.Header, path, body, nil, nil, -1)
		http.Error(w, "fakemodel: no such route", http.StatusNotFound)
	}
}

// record keeps the request and picks its turn: the number of tool calls its conversation
// already holds, when it offers tools.
func (s *Server) record(h http.Header, path string, body map[string]any, tools, results []string, calls int) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	turn := -1
	if len(tools) > 0 && calls >= 0 && calls < len(s.script) {
		turn = calls
	}
	req := Request{Path: path, Header: h.Clone(), Body: body, Tools: tools, Results: results, Turn: turn}
	s.reqs = append(s.reqs, req)
	return req
}

func (s *Server) turn(req Request) Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Turn < 0 || req.Turn >= len(s.script) {
		return Turn{Text: "done"}
	}
	return s.script[req.Turn]
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes events as a text/event-stream, each under its "type".
func sse(w http.ResponseWriter, events []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	for _, ev := range events {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev["type"], data)
	}
	_, _ = w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// --- Anthropic Messages API ---

func anthropicTools(body map[string]any) []string {
	var out []string
	for _, t := range list(body["tools"]) {
		if n, ok := obj(t)["name"].(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// anthropicToolCalls counts the tool_use blocks of the conversation's assistant messages.
func anthropicToolCalls(body map[string]any) int {
	n := 0
	for _, m := range list(body["messages"]) {
		if obj(m)["role"] != "assistant" {
			continue
		}
		for _, c := range list(obj(m)["content"]) {
			if obj(c)["type"] == "tool_use" {
				n++
			}
		}
	}
	return n
}

func anthropicResults(body map[string]any) []string {
	var out []string
	for _, m := range list(body["messages"]) {
		for _, c := range list(obj(m)["content"]) {
			if obj(c)["type"] != "tool_result" {
				continue
			}
			out = append(out, text(obj(c)["content"]))
		}
	}
	return out
}

func (s *Server) anthropic(w http.ResponseWriter, body map[string]any, req Request) {
	t := s.turn(req)
	model, _ := body["model"].(string)
	id := fmt.Sprintf("msg_fake_%d", len(s.Requests()))
	var block map[string]any
	stop := "end_turn"
	if t.Tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", req.Turn), "name": t.Tool, "input": t.Input}
	} else {
		block = map[string]any{"type": "text", "text": t.Text}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if stream, _ := body["stream"].(bool); !stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	start, delta := map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": t.Text}
	if t.Tool != "" {
		args, _ := json.Marshal(t.Input)
		start = map[string]any{"type": "tool_use", "id": block["id"], "name": t.Tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(args)}
	}
	sse(w, []map[string]any{
		{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}},
		{"type": "content_block_start", "index": 0, "content_block": start},
		{"type": "content_block_delta", "index": 0, "delta": delta},
		{"type": "content_block_stop", "index": 0},
		{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}},
		{"type": "message_stop"},
	})
}

// --- OpenAI Responses API ---

func openAITools(body map[string]any) []string {
	tools := list(body["tools"])
	for _, it := range list(body["input"]) {
		if obj(it)["type"] == "additional_tools" {
			tools = append(tools, list(obj(it)["tools"])...)
		}
	}
	return openAIToolNames(tools)
}

// execNested finds the nested tools a code mode exec tool's description declares.
var execNested = regexp.MustCompile("(?m)^### `([^`]+)`")

func openAIToolNames(tools []any) []string {
	var out []string
	for _, t := range tools {
		t := obj(t)
		if sub, ok := t["tools"].([]any); ok && t["type"] == "namespace" {
			out = append(out, openAIToolNames(sub)...)
			continue
		}
		n, ok := t["name"].(string)
		if !ok {
			if typ, ok := t["type"].(string); ok {
				n = typ // a hosted tool (web_search, image_generation) has only its type
			} else {
				continue
			}
		}
		out = append(out, n)
		if desc, _ := t["description"].(string); n == "exec" {
			for _, m := range execNested.FindAllStringSubmatch(desc, -1) {
				out = append(out, "exec/"+m[1])
			}
		}
	}
	return out
}

func openAIToolCalls(body map[string]any) int {
	n := 0
	for _, it := range list(body["input"]) {
		if typ := obj(it)["type"]; typ == "function_call" || typ == "custom_tool_call" {
			n++
		}
	}
	return n
}

func openAIResults(body map[string]any) []string {
	var out []string
	for _, it := range list(body["input"]) {
		if typ := obj(it)["type"]; typ == "function_call_output" || typ == "custom_tool_call_output" {
			out = append(out, text(obj(it)["output"]))
		}
	}
	return out
}

func (s *Server) openAI(w http.ResponseWriter, req Request) {
	t := s.turn(req)
	id := fmt.Sprintf("resp_fake_%d", len(s.Requests()))
	var item map[string]any
	if t.Tool != "" && t.Freeform != "" {
		item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%d", req.Turn), "call_id": fmt.Sprintf("call_fake_%d", req.Turn),
			"name": t.Tool, "input": t.Freeform, "status": "completed"}
	} else if t.Tool != "" {
		args, _ := json.Marshal(t.Input)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", req.Turn), "call_id": fmt.Sprintf("call_fake_%d", req.Turn),
			"name": t.Tool, "arguments": string(args), "status": "completed"}
		if t.Namespace != "" {
			item["namespace"] = t.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "role": "assistant", "id": "msg_" + id, "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}}
	}
	events := []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": id}},
		{"type": "response.output_item.added", "output_index": 0, "item": item},
	}
	if t.Tool == "" {
		// The AI SDK (opencode) takes a message's text from its deltas alone, not from
		// the finished item as Codex does.
		events = append(events, map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
			"content_index": 0, "delta": t.Text})
	}
	sse(w, append(events, []map[string]any{
		{"type": "response.output_item.done", "output_index": 0, "item": item},
		{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
			"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 5, "output_tokens_details": nil, "total_tokens": 15}}},
	}...))
}

// --- JSON helpers ---

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// text is a tool result's text: a string, or the text of a list of content parts.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if s, ok := obj(p)["text"].(string); ok {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// EnvAgentCLIs names the directory holding the real agent CLIs' executables (claude,
// codex, opencode): `make agents-e2e` installs them from npm (test/agents-e2e) and sets it. Plain
// `go test ./...` leaves it unset, and the tests that need the CLIs skip.
const EnvAgentCLIs = "AIRLOCK_AGENTS_E2E"

// CLI is the path of the real agent CLI name; it skips the test outside make agents-e2e
// and fails it there when the CLI is missing.
func CLI(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv(EnvAgentCLIs)
	if dir == "" {
		t.Skipf("the real agent CLIs run under `make agents-e2e` (%s unset)", EnvAgentCLIs)
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("%s: %v: run `make agents-e2e`, which installs it from npm (test/agents-e2e)", name, err)
	}
	if strings.HasPrefix(p, "/tmp/") {
		p = sandboxVisible(t, filepath.Dir(filepath.Dir(p)), name)
	}
	return p
}

// sandboxVisible copies the installed CLIs (node_modules, whose .bin links are relative)
// out of /tmp, which every sandbox has its own of — a checkout under /tmp, as a CI
// machine may have, would otherwise run agents the sandbox cannot see. Hard links where
// the file system allows, so the copy is free; removed with the test.
func sandboxVisible(t testing.TB, modules, name string) string {
	t.Helper()
	dest, err := os.MkdirTemp("/var/tmp", "airlock-agent-clis-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dest) })
	to := filepath.Join(dest, "node_modules")
	if err := exec.Command("cp", "-al", modules, to).Run(); err != nil {
		os.RemoveAll(to)
		if out, err := exec.Command("cp", "-a", modules, to).CombinedOutput(); err != nil {
			t.Fatalf("copy the agent CLIs out of /tmp: %v: %s", err, out)
		}
	}
	return filepath.Join(to, ".bin", name)
}
