package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
)

// TestGeneratedFileIsCurrent: the committed frontend/src/lib/wire.gen.ts is what the
// generator writes from api today, so the window's types are Go's.
func TestGeneratedFileIsCurrent(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ReadDocs(filepath.Join(root, "api"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(api.Events, docs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, Output))
	if err != nil {
		t.Fatalf("read %s: %v; write it with `%s`", Output, err, Command)
	}
	if string(got) == string(want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is not what package api declares (line %d is %q, Go's is %q): regenerate it with `%s` and commit it",
				Output, i+1, g, w, Command)
		}
	}
}

// TestFrontendDeclaresNoWireTypeAgain: no hand-written TypeScript in the frontend declares
// a type the generator writes (a copy drifts: one said the micro-VM's host support was
// optional and partial); it imports it from wire.gen.ts instead.
func TestFrontendDeclaresNoWireTypeAgain(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(filepath.Join(root, Output))
	if err != nil {
		t.Fatal(err)
	}
	declared := regexp.MustCompile(`(?m)^export (?:interface|type) (\w+)`)
	generated := map[string]bool{}
	for _, m := range declared.FindAllStringSubmatch(string(gen), -1) {
		generated[m[1]] = true
	}
	if len(generated) < 20 {
		t.Fatalf("found only %d generated types in %s", len(generated), Output)
	}
	src := filepath.Join(root, "frontend", "src")
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(root, Output) {
			return err
		}
		if ext := filepath.Ext(p); ext != ".ts" && ext != ".svelte" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^\s*(?:export )?(?:interface|type) (\w+)\b`).FindAllStringSubmatch(string(b), -1) {
			if generated[m[1]] {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s declares %s again: import it from %s (generated from package api)", rel, m[1], filepath.Base(Output))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type inner struct {
	N int `json:"n"`
}

type embedded struct {
	E string `json:"e"`
}

type wire struct {
	embedded
	Name    string            `json:"name"`
	Count   uint              `json:"count,omitempty"`
	At      time.Time         `json:"at"`
	When    *time.Time        `json:"when,omitempty"`
	Maybe   *inner            `json:"maybe"`
	List    []string          `json:"list"`
	Opt     []inner           `json:"opt,omitempty"`
	Labels  map[string]string `json:"labels"`
	Bytes   []byte            `json:"bytes"`
	Skipped string            `json:"-"`
	hidden  string
	Inner   inner `json:"inner,omitempty"`
	Quoted  int64 `json:"quoted,string"`
}

type empty struct{}

type camel struct {
	RunID int `json:"runId"`
}

type untagged struct {
	Name string
}

type nonStringKeys struct {
	M map[int]string `json:"m"`
}

type fn struct {
	F func() `json:"f"`
}

func TestGenerate(t *testing.T) {
	_ = wire{}.hidden
	tests := []struct {
		name    string
		payload reflect.Type
		want    []string // lines the output must hold
	}{
		{"every kind", reflect.TypeFor[wire](), []string{
			"export interface wire {", "  e: string;", "  name: string;", "  count?: number;", "  at: string;",
			"  when?: string;", "  maybe: inner | null;", "  list: string[] | null;", "  opt?: inner[];",
			"  labels: Record<string, string> | null;", "  bytes: string;", "  inner: inner;", "  quoted: string;",
			"export interface inner {", "  n: number;", "  'x.y': wire;", "  XY: 'x.y',",
		}},
		{"empty struct", reflect.TypeFor[empty](), []string{"export type empty = Record<string, never>;", "  'x.y': empty;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Generate([]api.EventInfo{{Topic: "x.y", Payload: tt.payload}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range tt.want {
				if !strings.Contains(string(out), line+"\n") {
					t.Errorf("no %q in\n%s", line, out)
				}
			}
			for _, absent := range []string{"Skipped", "hidden", "embedded"} {
				if strings.Contains(string(out), absent) {
					t.Errorf("%q is not on the wire, but is in\n%s", absent, out)
				}
			}
		})
	}
}

// Go's doc comments reach the TypeScript, so the window's code reads what the field means.
func TestGenerateCarriesDocs(t *testing.T) {
	docs := Docs{"inner": "inner is nested.\nTwo lines.", "inner.N": "N counts */ things."}
	out, err := Generate([]api.EventInfo{{Topic: "x.y", Payload: reflect.TypeFor[inner]()}}, docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/**\n * inner is nested.\n * Two lines.\n *\n * Go: tsgen.inner\n */\nexport interface inner {", "  /** N counts * / things. */\n  n: number;"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	apiDocs, err := ReadDocs(filepath.Join(root, "api"))
	if err != nil {
		t.Fatal(err)
	}
	if got := apiDocs["RunLogChunk"]; !strings.HasPrefix(got, "RunLogChunk (run.log)") {
		t.Errorf("ReadDocs of api: RunLogChunk's comment is %q", got)
	}
}

// A type that is not on the wire in the one casing, or cannot be, is refused with its
// field named.
func TestGenerateRefuses(t *testing.T) {
	tests := []struct {
		name    string
		payload reflect.Type
		want    string
	}{
		{"camelCase", reflect.TypeFor[camel](), `camel.RunID is "runId" on the wire, not snake_case`},
		{"no json tag", reflect.TypeFor[untagged](), "untagged.Name has no json name"},
		{"map keys", reflect.TypeFor[nonStringKeys](), "map keys other than strings"},
		{"func", reflect.TypeFor[fn](), "fn.F"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate([]api.EventInfo{{Topic: "x.y", Payload: tt.payload}}, nil)
			if !errors.Is(err, ErrNotWire) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrNotWire saying %q", err, tt.want)
			}
		})
	}
}
