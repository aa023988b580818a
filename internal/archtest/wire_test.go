package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// wireStruct is a struct type with json tags, as declared in the source.
type wireStruct struct {
	pkg, name, pos string
	fields         []string // json names, sorted
	untagged       []string // exported fields without a json tag
}

// wireStructs parses every non-test Go file of the module and lists its struct types
// that carry json tags.
func wireStructs(t *testing.T) []wireStruct {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var out []wireStruct
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "frontend", "tools", "build", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Assign.IsValid() {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			ws := wireStruct{pkg: rel, name: ts.Name.Name, pos: fset.Position(ts.Pos()).String()}
			for _, fl := range st.Fields.List {
				tag := ""
				if fl.Tag != nil {
					tag, _ = strconv.Unquote(fl.Tag.Value)
				}
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if len(fl.Names) == 0 { // embedded: its fields are its own type's
					continue
				}
				for _, id := range fl.Names {
					switch {
					case name == "-":
					case name != "":
						ws.fields = append(ws.fields, name)
					case id.IsExported():
						ws.untagged = append(ws.untagged, id.Name)
					}
				}
			}
			if len(ws.fields) > 0 {
				slices.Sort(ws.fields)
				out = append(out, ws)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// notWire are json-tagged structs outside package api that are not Airlock's wire: other
// programs' formats (Claude Code's hook JSON, the MCP tools' arguments, the micro-VM's
// guest protocol) and files on disk. Each says why.
var notWire = map[string]string{
	"app/gateway.ClaudeEvent":     "Claude Code's PreToolUse hook input",
	"app/gateway.ClaudeOutput":    "Claude Code's hook output",
	"app/gateway.ClaudeDecision":  "Claude Code's hook output",
	"app/gateway.codexDeny":       "Codex's PreToolUse hook output",
	"app/gateway.CodexEvent":      "Codex's PreToolUse hook input",
	"sandbox/vm/agent.Message":    "the micro-VM guest agent's protocol, built into guest images already installed",
	"sandbox/vminstall.Installed": "a file on disk that older installs wrote",
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestWireTypesAreDeclaredOnce: every type that crosses the local API is declared in
// package api, once, in one JSON casing (snake_case). A struct elsewhere that repeats
// an api type's name or its JSON fields is a second declaration of the wire and fails.
func TestWireTypesAreDeclaredOnce(t *testing.T) {
	all := wireStructs(t)
	apiByName := map[string]wireStruct{}
	apiByFields := map[string]wireStruct{}
	for _, ws := range all {
		if ws.pkg != "api" {
			continue
		}
		apiByName[ws.name] = ws
		apiByFields[strings.Join(ws.fields, ",")] = ws
		for _, f := range ws.fields {
			if !snakeCase.MatchString(f) {
				t.Errorf("%s: api.%s's json name %q is not snake_case, the wire's one casing", ws.pos, ws.name, f)
			}
		}
		if len(ws.untagged) > 0 {
			t.Errorf("%s: api.%s's fields %v have no json tag (they would travel as Go names)", ws.pos, ws.name, ws.untagged)
		}
	}
	for _, ws := range all {
		if ws.pkg == "api" || strings.HasPrefix(ws.pkg, "api/") {
			continue
		}
		if why, ok := notWire[ws.pkg+"."+ws.name]; ok && why != "" {
			continue
		}
		for _, f := range ws.fields {
			if !snakeCase.MatchString(f) {
				t.Errorf("%s: %s.%s's json name %q is not snake_case, the one casing of everything Airlock writes as JSON (another program's format goes in notWire, with why)", ws.pos, ws.pkg, ws.name, f)
			}
		}
		if a, ok := apiByName[ws.name]; ok {
			t.Errorf("%s: %s.%s repeats the wire type api.%s (%s): use the api type (an alias if the package needs its name)", ws.pos, ws.pkg, ws.name, a.name, a.pos)
			continue
		}
		if a, ok := apiByFields[strings.Join(ws.fields, ",")]; ok && len(ws.fields) >= 3 {
			t.Errorf("%s: %s.%s has the JSON fields of api.%s (%s): a second declaration of a wire type; use the api type", ws.pos, ws.pkg, ws.name, a.name, a.pos)
		}
	}
}
