package api

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestPermissionWireIsSnakeCase: every field of the permission broker's wire types,
// nested ones included, travels under a snake_case json name; a field without a json tag
// would travel under its Go name (CamelCase), so it is refused too.
func TestPermissionWireIsSnakeCase(t *testing.T) {
	types := []any{Request{}, Decision{}, Outcome{}, AfterToolUse{}, Accepted{}, Evaluation{}, PendingRequest{},
		DecidedEvent{}, AnswerIn{}, ProofSummary{}, GrantRecord{}, Revoked{}, AuditRecord{}, AuditFilter{},
		SandboxIn{}, SandboxRegistered{}, SandboxForgotten{}, Approval{}}
	seen := map[reflect.Type]bool{}
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || rt == reflect.TypeFor[time.Time]() || seen[rt] {
			return
		}
		seen[rt] = true
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				walk(f.Type, path) // its fields are flattened into this object
				continue
			case !snakeCase.MatchString(name):
				t.Errorf("%s.%s travels as %q: give it a snake_case json tag", path, f.Name, name)
			}
			if f.Type != reflect.TypeFor[json.RawMessage]() {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, v := range types {
		rt := reflect.TypeOf(v)
		walk(rt, rt.Name())
	}
}
