package api

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestRouteTypesAreSnakeCase: every field of what a route of the table takes or answers,
// down through the api types it holds, travels under a snake_case json name; a field
// without a json tag would travel under its Go name, so it is an error too.
func TestRouteTypesAreSnakeCase(t *testing.T) {
	pkg := reflect.TypeFor[None]().PkgPath()
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, where string) {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(ty.Elem(), where)
			return
		case reflect.Struct:
		default:
			return
		}
		if ty.PkgPath() != pkg || seen[ty] {
			return // time.Time and the like have their own encoding
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case name == "" && f.Anonymous:
				// An embedded struct's fields are inlined: they are checked as its own.
			case name == "":
				t.Errorf("%s: %s.%s has no json tag", where, ty.Name(), f.Name)
			case !snakeCase.MatchString(name):
				t.Errorf("%s: %s.%s travels as %q, not snake_case", where, ty.Name(), f.Name, name)
			}
			walk(f.Type, where)
		}
	}
	for _, r := range Routes() {
		where := r.Method + " " + r.Path
		walk(r.In, where)
		walk(r.Out, where)
	}
}
