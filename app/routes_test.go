package app

import (
	"slices"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/vartmp"
)

// TestOneRouteTable: every pattern the core serves is a route of api's table, declared
// once, and every route of the table is served. So a path, its method and its types
// are written in one place, and the CLI's client and the core cannot disagree on them.
func TestOneRouteTable(t *testing.T) {
	base := vartmp.Dir(t, "routes-")
	c, _ := runCoreAt(t, base)

	var table []string
	for _, r := range api.Routes() {
		p := r.Method + " " + r.Path
		if slices.Contains(table, p) {
			t.Errorf("route %s is declared twice in package api", p)
		}
		table = append(table, p)
	}
	served := c.api.Patterns()
	seen := map[string]int{}
	for _, p := range served {
		seen[p]++
		if seen[p] == 2 {
			t.Errorf("the core registers %s twice", p)
		}
		if !slices.Contains(table, p) && !slices.Contains(windowOnly, p) {
			t.Errorf("the core serves %s, which is not a route of api's table: declare it there (api.route) and serve it with handle", p)
		}
	}
	for _, p := range table {
		if seen[p] == 0 && !slices.Contains(windowOnly, p) {
			t.Errorf("api declares %s, which the core does not serve", p)
		}
	}
}

// windowOnly are the table's routes that only the window's process serves (app/desktop).
var windowOnly = []string{api.ShowWindow.Pattern()}
