package desktop

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
)

// The window's one events module must name exactly the topics the core publishes: a
// topic missing there is an event the window can never react to, and a topic only there
// is a listener that never fires. The module takes them from the file generated from
// api.Events (wire.gen.ts, which api/internal/tsgen's test holds to Go), and declares no
// list of its own.
func TestEventsModuleMirrorsTopics(t *testing.T) {
	lib := filepath.Join("..", "..", "frontend", "src", "lib")
	gen, err := os.ReadFile(filepath.Join(lib, "wire.gen.ts"))
	if err != nil {
		t.Fatalf("read the generated wire types: %v", err)
	}
	got, err := topicsInEventsModule(string(gen))
	if err != nil {
		t.Fatalf("wire.gen.ts: %v", err)
	}
	want := api.Topics()
	for _, list := range [][]string{got, want} {
		slices.Sort(list)
	}
	path := filepath.Join(lib, "wire.gen.ts")
	if dup := duplicate(got); dup != "" {
		t.Errorf("%s lists %q twice", path, dup)
	}
	for _, topic := range want {
		if !slices.Contains(got, topic) {
			t.Errorf("%s lacks the topic %q of api.Events: run `go run ./api/internal/tsgen`", path, topic)
		}
	}
	for _, topic := range got {
		if !slices.Contains(want, topic) {
			t.Errorf("%s lists %q, which api.Events does not declare: run `go run ./api/internal/tsgen`", path, topic)
		}
	}
	events, err := os.ReadFile(filepath.Join(lib, "events.ts"))
	if err != nil {
		t.Fatalf("read the frontend's events module: %v", err)
	}
	if _, err := topicsInEventsModule(string(events)); err == nil {
		t.Errorf("events.ts declares its own Topics: take them from './wire.gen'")
	}
	if !regexp.MustCompile(`import \{[^}]*\bTopics\b[^}]*\} from '\./wire\.gen'`).Match(events) {
		t.Errorf("events.ts does not import Topics from './wire.gen'")
	}
}

var topicEntry = regexp.MustCompile(`(?m)^\s*\w+:\s*'([^']*)',?\s*$`)

// topicsInEventsModule reads the values of `export const Topics = { ... } as const;`.
func topicsInEventsModule(src string) ([]string, error) {
	const open = "export const Topics = {"
	start := strings.Index(src, open)
	if start < 0 {
		return nil, errNoTopics
	}
	body := src[start+len(open):]
	end := strings.Index(body, "} as const")
	if end < 0 {
		return nil, errNoTopics
	}
	var out []string
	for _, m := range topicEntry.FindAllStringSubmatch(body[:end], -1) {
		out = append(out, m[1])
	}
	return out, nil
}

type parseError string

func (e parseError) Error() string { return string(e) }

const errNoTopics = parseError("no `export const Topics = { ... } as const;` block found")

func duplicate(sorted []string) string {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return sorted[i]
		}
	}
	return ""
}

func TestTopicsInEventsModule(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
		err  bool
	}{
		{"entries", "export const Topics = {\n  A: 'a.b',\n  B: 'c',\n} as const;", []string{"a.b", "c"}, false},
		{"ignores other objects", "const x = { Z: 'z' };\nexport const Topics = {\n  A: 'a',\n} as const;", []string{"a"}, false},
		{"no block", "export const Other = {} as const;", nil, true},
		{"unterminated", "export const Topics = {\n  A: 'a',\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := topicsInEventsModule(tt.src)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The window's own events (not core topics) and the routes notifications and the tray
// open are spelled the same in the events module and nav.ts as here: a click whose
// event or route the window does not know would open nothing.
func TestWindowEventsAndRoutesMirrored(t *testing.T) {
	lib := filepath.Join("..", "..", "frontend", "src", "lib")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(lib, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	events, nav := read("events.ts"), read("nav.ts")
	for _, want := range []string{
		"export const ReviewEvent = '" + ReviewEvent + "'",
		"export const NavigateEvent = '" + NavigateEvent + "'",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("events.ts lacks %s", want)
		}
	}
	// nav.ts's dispatchRoute reads "#/dispatch/runs", an optional "/ID" and "?status=".
	for _, route := range []string{routeFailedRuns, routeRun(12)} {
		if !regexp.MustCompile(`^#/dispatch/runs(/\d+)?(\?status=\w+)?$`).MatchString(route) {
			t.Errorf("route %q is not one nav.ts's dispatchRoute reads", route)
		}
	}
	if !strings.Contains(nav, "id: '"+strings.TrimPrefix(routeWaiting, "#/")+"'") || !strings.Contains(nav, "dispatchRoute") {
		t.Errorf("nav.ts lacks the page of %q or dispatchRoute", routeWaiting)
	}
}
