// Package archtest holds the test of Airlock's import rules (docs/ARCHITECTURE.md,
// "What may import what"). It has no production code, so it adds no import anywhere.
package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A pattern names packages. Inside the module it is relative to the module path: "." is
// the root package (main.go), "app" is exactly app, "app/..." is app and every package
// below it, "..." is every package of the module. A pattern whose first element holds a
// dot ("gorm.io/...", "github.com/mattn/go-sqlite3") names packages outside the module.

// rule forbids the packages matching Packages (minus Except) to depend, directly or
// through any chain of imports, on a package matching Forbid (minus Allow).
type rule struct {
	ID       string
	Packages []string
	Except   []string
	Forbid   []string
	Allow    []string
	// Todo, when set, marks a known violation: the test reports it as a skip with this
	// reason instead of failing, and fails once the rule holds (remove the Todo then).
	Todo string
}

// rules is the table of docs/ARCHITECTURE.md, one entry per row; a test keeps them equal.
var rules = []rule{
	{ID: "R1", Packages: []string{"cmd/airlock", "cmd/airlock-agent", "app/cli/...", "app/gateway/..."},
		Forbid: []string{"app", "app/desktop/...", "gorm.io/...", "github.com/mattn/go-sqlite3", "github.com/wailsapp/...", "fyne.io/systray/..."}},
	{ID: "R2", Packages: []string{"cmd/airlock"},
		Forbid: []string{"github.com/modelcontextprotocol/..."}},
	{ID: "R3", Packages: []string{"..."}, Except: []string{".", "app/desktop/...", "test/wails-floor"},
		Forbid: []string{"github.com/wailsapp/...", "fyne.io/systray/..."}},
	{ID: "R4", Packages: []string{"..."}, Except: []string{".", "app/desktop/..."},
		Forbid: []string{"app/desktop/..."}},
	{ID: "R5", Packages: []string{"sandbox/...", "departments/...", "permission/...", "ops/...", "dispatch/...", "redact/..."},
		Forbid: []string{"app/..."}},
	{ID: "R6", Packages: []string{"dispatch/..."}, Forbid: []string{"ops/..."}},
	{ID: "R7", Packages: []string{"ops/..."}, Forbid: []string{"dispatch/...", "departments/..."}},
	{ID: "R8", Packages: []string{"permission/..."}, Forbid: []string{"dispatch/...", "ops/...", "departments/..."}},
	{ID: "R9", Packages: []string{"sandbox/..."}, Forbid: []string{"..."}, Allow: []string{"sandbox/...", "api/...", "internal/realpath"}},
	{ID: "R10", Packages: []string{"departments/..."}, Forbid: []string{"..."}, Allow: []string{"departments/...", "api/...", "internal/realpath", "internal/refusal"}},
	{ID: "R11", Packages: []string{"redact/..."}, Forbid: []string{"..."}, Allow: []string{"redact/..."}},
	{ID: "R12", Packages: []string{"api/..."}, Forbid: []string{"..."}, Allow: []string{"api/..."}},
}

// build is one configuration the import graph is listed in: the files a package
// compiles differ by OS and cgo.
type build struct {
	Name string
	Env  []string
}

// builds are the configurations of the shipped executables: Linux with cgo (the core,
// PAM), and macOS (Seatbelt). Each executable has its own main package, so no build tag
// changes what a command line links. The desktop's production tag is left out: it embeds
// frontend/dist, which a fresh clone lacks, and changes no import of Airlock's own
// packages.
var builds = []build{
	{Name: "linux", Env: []string{"GOOS=linux", "CGO_ENABLED=1"}},
	{Name: "darwin", Env: []string{"GOOS=darwin", "CGO_ENABLED=0"}},
}

// pkg is what `go list -deps -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
	Standard   bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// graph is the import graph of one build.
type graph struct {
	module string
	pkgs   map[string]*pkg
	roots  []string // the module's own packages (./...), sorted
}

func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	for _, b := range builds {
		t.Run(b.Name, func(t *testing.T) {
			g := listGraph(t, root, b)
			for _, r := range rules {
				t.Run(r.ID, func(t *testing.T) {
					if len(g.matching(r.Packages, r.Except)) == 0 {
						t.Fatalf("rule %s names no package (%v): the table is stale, fix it here and in docs/ARCHITECTURE.md", r.ID, r.Packages)
					}
					v := g.violations(r)
					switch {
					case len(v) > 0 && r.Todo != "":
						t.Skipf("known violation of %s (%s):\n%s", r.ID, r.Todo, strings.Join(v, "\n"))
					case len(v) > 0:
						t.Errorf("%s is broken (%s may not depend on %s):\n%s\nsee docs/ARCHITECTURE.md, \"What may import what\"",
							r.ID, describe(r.Packages, r.Except), describe(r.Forbid, r.Allow), strings.Join(v, "\n"))
					case r.Todo != "":
						t.Errorf("%s holds now: remove its Todo (%s)", r.ID, r.Todo)
					}
				})
			}
		})
	}
}

// TestViolationNamesTheChain checks the checker itself on a made-up graph: a forbidden
// dependency is reported with the whole chain that leads to it, an allowed one is not.
func TestViolationNamesTheChain(t *testing.T) {
	const m = "example.com/m"
	g := &graph{module: m, pkgs: map[string]*pkg{}}
	add := func(path string, imports ...string) {
		g.pkgs[path] = &pkg{ImportPath: path, Imports: imports}
		if strings.HasPrefix(path, m) {
			g.roots = append(g.roots, path)
		}
	}
	add(m+"/cli", m+"/policy", "fmt")
	add(m+"/policy", m+"/store")
	add(m+"/store", "gorm.io/gorm")
	add("gorm.io/gorm", "database/sql")
	add(m+"/sandbox", m+"/sandbox/shell")
	add(m + "/sandbox/shell")
	g.pkgs["fmt"] = &pkg{ImportPath: "fmt", Standard: true}
	g.pkgs["database/sql"] = &pkg{ImportPath: "database/sql", Standard: true}

	tests := []struct {
		name string
		r    rule
		want []string
	}{
		{"external through two packages", rule{Packages: []string{"cli"}, Forbid: []string{"gorm.io/..."}},
			[]string{"cli → policy → store → gorm.io/gorm"}},
		{"the first forbidden package on the way", rule{Packages: []string{"cli"}, Forbid: []string{"store", "gorm.io/..."}},
			[]string{"cli → policy → store"}},
		{"inside the module", rule{Packages: []string{"..."}, Except: []string{"store"}, Forbid: []string{"store"}},
			[]string{"cli → policy → store", "policy → store"}},
		{"allowed subtree", rule{Packages: []string{"sandbox/..."}, Forbid: []string{"..."}, Allow: []string{"sandbox/..."}}, nil},
		{"nothing forbidden reached", rule{Packages: []string{"sandbox/..."}, Forbid: []string{"gorm.io/..."}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := g.violations(tt.r)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRulesMatchTheDocument keeps the table above and the one in docs/ARCHITECTURE.md
// equal, row for row.
func TestRulesMatchTheDocument(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "docs", "ARCHITECTURE.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the architecture document: %v", err)
	}
	doc, err := parseRules(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	byID := map[string]rule{}
	for _, r := range doc {
		byID[r.ID] = r
	}
	for _, want := range rules {
		got, ok := byID[want.ID]
		if !ok {
			t.Errorf("%s: rule %s is missing from the table (the test has %s)", path, want.ID, show(want))
			continue
		}
		delete(byID, want.ID)
		want.Todo = ""
		if show(got) != show(want) {
			t.Errorf("%s: rule %s differs:\n  document: %s\n  test:     %s", path, want.ID, show(got), show(want))
		}
	}
	for id, r := range byID {
		t.Errorf("%s: rule %s (%s) is not in the test's table", path, id, show(r))
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatal("go env GOMOD: not inside the module")
	}
	return filepath.Dir(mod)
}

func listGraph(t *testing.T, root string, b build) *graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Imports,DepOnly,Standard,Module,Error", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), b.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (%s): %v\n%s", b.Name, err, stderr.Bytes())
	}
	g := &graph{pkgs: map[string]*pkg{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list (%s): decode its output: %v", b.Name, err)
		}
		if p.Error != nil {
			// A package that does not load has no imports to check: say so rather than
			// pass with a hole in the graph.
			t.Fatalf("go list (%s): %s: %s", b.Name, p.ImportPath, p.Error.Err)
		}
		if !p.DepOnly && p.Module != nil {
			if g.module == "" {
				g.module = p.Module.Path
			}
			g.roots = append(g.roots, p.ImportPath)
		}
		g.pkgs[p.ImportPath] = &p
	}
	if g.module == "" {
		t.Fatalf("go list (%s) listed no package of the module", b.Name)
	}
	slices.Sort(g.roots)
	return g
}

// match reports whether the import path p matches the pattern pat.
func (g *graph) match(pat, p string) bool {
	full := pat
	switch first, _, _ := strings.Cut(pat, "/"); {
	case pat == ".":
		full = g.module
	case pat == "...":
		full = g.module + "/..."
	case !strings.Contains(first, "."):
		full = g.module + "/" + pat
	}
	if base, ok := strings.CutSuffix(full, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == full
}

func (g *graph) matchAny(pats []string, p string) bool {
	return slices.ContainsFunc(pats, func(pat string) bool { return g.match(pat, p) })
}

// matching lists the module's packages that match pats and none of except.
func (g *graph) matching(pats, except []string) []string {
	var out []string
	for _, p := range g.roots {
		if g.matchAny(pats, p) && !g.matchAny(except, p) {
			out = append(out, p)
		}
	}
	return out
}

// violations lists, for every package r binds, the shortest import chain to each
// forbidden package it reaches first (the search does not go on through a forbidden
// package: the chain to it is the one to fix).
func (g *graph) violations(r rule) []string {
	forbidden := func(p string) bool { return g.matchAny(r.Forbid, p) && !g.matchAny(r.Allow, p) }
	var out []string
	for _, start := range g.matching(r.Packages, r.Except) {
		prev := map[string]string{start: ""}
		queue := []string{start}
		var hits []string
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			p := g.pkgs[cur]
			if p == nil {
				continue
			}
			for _, imp := range p.Imports {
				if _, seen := prev[imp]; seen {
					continue
				}
				prev[imp] = cur
				if forbidden(imp) {
					hits = append(hits, imp)
					continue
				}
				queue = append(queue, imp)
			}
		}
		for _, hit := range hits {
			chain := []string{hit}
			for at := prev[hit]; at != ""; at = prev[at] {
				chain = append(chain, at)
			}
			slices.Reverse(chain)
			for i, c := range chain {
				chain[i] = g.short(c)
			}
			out = append(out, strings.Join(chain, " → "))
		}
	}
	return out
}

// short writes a module package relative to the module, as the rules do.
func (g *graph) short(p string) string {
	if p == g.module {
		return "."
	}
	if rest, ok := strings.CutPrefix(p, g.module+"/"); ok {
		return rest
	}
	return p
}

func describe(pats, except []string) string {
	named := slices.Clone(pats)
	for i, p := range named {
		if p == "..." {
			named[i] = "... (every package of the module)"
		}
	}
	s := strings.Join(named, ", ")
	if len(except) > 0 {
		s += " (except " + strings.Join(except, ", ") + ")"
	}
	return s
}

// show is a rule's canonical text, to compare the document's rows with the table.
func show(r rule) string {
	sorted := func(s []string) string { c := slices.Clone(s); slices.Sort(c); return strings.Join(c, " ") }
	return fmt.Sprintf("packages [%s] except [%s] may not depend on [%s] except [%s]",
		sorted(r.Packages), sorted(r.Except), sorted(r.Forbid), sorted(r.Allow))
}

var (
	codeSpan = regexp.MustCompile("`([^`]*)`")
	ruleID   = regexp.MustCompile(`^R[0-9]+$`)
)

// parseRules reads the rows of the document's rule table, between the markers
// <!-- import-rules --> and <!-- /import-rules -->:
//
//	| R1 | `a`, `b/...` except `b/c` | `x/...` except `x/y` | why |
//
// Patterns are code spans; those after the word "except" are exceptions.
func parseRules(data []byte) ([]rule, error) {
	start := bytes.Index(data, []byte("<!-- import-rules -->"))
	end := bytes.Index(data, []byte("<!-- /import-rules -->"))
	if start < 0 || end < start {
		return nil, errors.New("no rule table between <!-- import-rules --> and <!-- /import-rules -->")
	}
	var out []rule
	sc := bufio.NewScanner(bytes.NewReader(data[start:end]))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if !ruleID.MatchString(cells[0]) {
			continue // the header and its separator
		}
		if len(cells) != 4 {
			return nil, fmt.Errorf("rule %s: %d cells, want 4 (rule, packages, may not depend on, why)", cells[0], len(cells))
		}
		r := rule{ID: cells[0]}
		r.Packages, r.Except = splitExcept(cells[1])
		r.Forbid, r.Allow = splitExcept(cells[2])
		out = append(out, r)
	}
	return out, sc.Err()
}

func splitExcept(cell string) (in, except []string) {
	head, tail, _ := strings.Cut(cell, " except ")
	for _, m := range codeSpan.FindAllStringSubmatch(head, -1) {
		in = append(in, m[1])
	}
	for _, m := range codeSpan.FindAllStringSubmatch(tail, -1) {
		except = append(except, m[1])
	}
	return in, except
}
