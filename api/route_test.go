package api

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// TestRoutesSpeakAPITypes: what every route of the table takes and answers is built from
// api's own types (and the standard library's time and raw JSON), so the wire has one
// definition that every executable shares.
func TestRoutesSpeakAPITypes(t *testing.T) {
	allowed := map[reflect.Type]bool{reflect.TypeFor[time.Time](): true, reflect.TypeFor[time.Duration](): true}
	apiPkg := reflect.TypeFor[None]().PkgPath()
	var check func(route string, typ reflect.Type, seen map[reflect.Type]bool)
	check = func(route string, typ reflect.Type, seen map[reflect.Type]bool) {
		if seen[typ] || allowed[typ] {
			return
		}
		seen[typ] = true
		if typ.Name() != "" && typ.PkgPath() != "" && typ.PkgPath() != apiPkg && typ.String() != "json.RawMessage" {
			t.Errorf("%s carries %s, which is not declared in package api", route, typ)
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			check(route, typ.Elem(), seen)
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				check(route, typ.Field(i).Type, seen)
			}
		}
	}
	if len(Routes()) == 0 {
		t.Fatal("the route table is empty")
	}
	for _, r := range Routes() {
		check(r.Method+" "+r.Path, r.In, map[reflect.Type]bool{})
		check(r.Method+" "+r.Path, r.Out, map[reflect.Type]bool{})
	}
}

func TestRouteURL(t *testing.T) {
	r := Route[None, None]{Method: http.MethodGet, Path: "/v1/tasks/{name}/runs/{id}"}
	for _, tc := range []struct {
		args []string
		want string
		err  bool
	}{
		{[]string{"nightly", "7"}, "/v1/tasks/nightly/runs/7", false},
		{[]string{"a/../b", "7"}, "/v1/tasks/a%2F..%2Fb/runs/7", false}, // a value never becomes path segments
		{[]string{"x y?", "#"}, "/v1/tasks/x%20y%3F/runs/%23", false},
		{[]string{"only-one"}, "", true},
		{[]string{"a", "b", "c"}, "", true},
	} {
		got, err := r.URL(tc.args...)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("URL(%q) = %q, %v; want %q (error %v)", tc.args, got, err, tc.want, tc.err)
		}
	}
}

type query struct {
	Task     string   `json:"task"`
	Limit    int      `json:"limit,omitempty"`
	After    uint64   `json:"after_seq"`
	Waiting  bool     `json:"waiting"`
	Statuses []string `json:"status"`
	Skipped  string   `json:"-"`
}

func TestQueryRoundTrip(t *testing.T) {
	in := query{Task: "a b&c", Limit: 5, After: 9, Waiting: true, Statuses: []string{"failed", "timed_out"}, Skipped: "x"}
	q, err := EncodeQuery(in)
	if err != nil {
		t.Fatal(err)
	}
	if q.Has("Skipped") || q.Has("-") {
		t.Errorf("a json:\"-\" field travelled: %v", q)
	}
	parsed, _ := url.ParseQuery(q.Encode())
	var out query
	if err := DecodeQuery(parsed, &out); err != nil {
		t.Fatal(err)
	}
	in.Skipped = ""
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
	var zero query
	if q, _ := EncodeQuery(zero); len(q) != 0 {
		t.Errorf("zero values travelled: %v", q)
	}
}

func TestDecodeQueryNamesTheBadParameter(t *testing.T) {
	var out query
	err := DecodeQuery(url.Values{"limit": {"ten"}}, &out)
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != CodeBadRequest || ae.Status != http.StatusBadRequest {
		t.Fatalf("err = %v, want a bad_request *Error", err)
	}
	if !errors.Is(err, &Error{Code: CodeBadRequest}) {
		t.Error("errors.Is by code does not match")
	}
}

func FuzzDecodeQuery(f *testing.F) {
	f.Add("task=x&limit=3&status=a,b&waiting=true")
	f.Add("limit=-1&after_seq=18446744073709551616")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		var out query
		_ = DecodeQuery(q, &out) // never panics
	})
}
