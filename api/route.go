package api

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Route is one operation of the local API: its method, its path pattern (net/http's
// ServeMux syntax, {name} for a path value), what it takes (In: the JSON body, or the
// URL query for GET and DELETE) and what it answers (Out). The core serves it and the
// client calls it from the same value, so the two cannot disagree on a path or a type.
type Route[In, Out any] struct {
	Method string
	Path   string
}

// None is the In or Out of a route that takes or answers nothing.
type None struct{}

// RouteInfo describes a route for the table's tests and docs.
type RouteInfo struct {
	Method, Path string
	In, Out      reflect.Type
}

// Pattern is the route's ServeMux pattern ("GET /v1/tasks/{name}").
func (r Route[In, Out]) Pattern() string { return r.Method + " " + r.Path }

// InQuery reports whether In travels in the URL query rather than a JSON body.
func (r Route[In, Out]) InQuery() bool {
	return r.Method == http.MethodGet || r.Method == http.MethodDelete || r.Method == http.MethodHead
}

// URL fills the path's {name} segments with args, in order, each escaped.
func (r Route[In, Out]) URL(args ...string) (string, error) {
	var b strings.Builder
	rest := r.Path
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("route %s: unclosed {", r.Pattern())
		}
		if len(args) == 0 {
			return "", fmt.Errorf("route %s: missing the value of %s", r.Pattern(), rest[i:i+j+1])
		}
		b.WriteString(rest[:i])
		b.WriteString(url.PathEscape(args[0]))
		args = args[1:]
		rest = rest[i+j+1:]
	}
	if len(args) > 0 {
		return "", fmt.Errorf("route %s: %d path values too many", r.Pattern(), len(args))
	}
	return b.String(), nil
}

var (
	tableMu sync.Mutex
	table   []RouteInfo
)

// route declares a route of the table. Every route of the local API is declared with it,
// in this package, once.
func route[In, Out any](method, path string) Route[In, Out] {
	tableMu.Lock()
	defer tableMu.Unlock()
	table = append(table, RouteInfo{Method: method, Path: path,
		In: reflect.TypeFor[In](), Out: reflect.TypeFor[Out]()})
	return Route[In, Out]{Method: method, Path: path}
}

// Routes is the route table: every route of the local API, in declaration order.
func Routes() []RouteInfo {
	tableMu.Lock()
	defer tableMu.Unlock()
	return append([]RouteInfo(nil), table...)
}

// EncodeQuery writes a struct's fields as URL query values, named by their json tags:
// strings, bools, integers, and string slices (comma-joined). Zero values are left out.
func EncodeQuery(v any) (url.Values, error) {
	q := url.Values{}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if !rv.IsValid() || rv.Type() == reflect.TypeFor[None]() {
		return q, nil
	}
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("query of %s: not a struct", rv.Type())
	}
	for i := 0; i < rv.NumField(); i++ {
		f, name := rv.Type().Field(i), queryName(rv.Type().Field(i))
		if name == "" || rv.Field(i).IsZero() {
			continue
		}
		fv := rv.Field(i)
		switch fv.Kind() {
		case reflect.String:
			q.Set(name, fv.String())
		case reflect.Bool:
			q.Set(name, strconv.FormatBool(fv.Bool()))
		case reflect.Int, reflect.Int32, reflect.Int64:
			q.Set(name, strconv.FormatInt(fv.Int(), 10))
		case reflect.Uint, reflect.Uint32, reflect.Uint64:
			q.Set(name, strconv.FormatUint(fv.Uint(), 10))
		case reflect.Slice:
			if fv.Type().Elem().Kind() != reflect.String {
				return nil, fmt.Errorf("query field %s.%s: only string slices travel in a query", rv.Type(), f.Name)
			}
			q.Set(name, strings.Join(fv.Interface().([]string), ","))
		default:
			return nil, fmt.Errorf("query field %s.%s: %s cannot travel in a query", rv.Type(), f.Name, fv.Kind())
		}
	}
	return q, nil
}

// DecodeQuery fills a struct from URL query values, the inverse of EncodeQuery. A value
// that does not parse is an *Error with CodeBadRequest naming the parameter.
func DecodeQuery(q url.Values, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("decode query into %T: not a pointer to a struct", v)
	}
	rv = rv.Elem()
	for i := 0; i < rv.NumField(); i++ {
		name := queryName(rv.Type().Field(i))
		s := q.Get(name)
		if name == "" || s == "" {
			continue
		}
		fv := rv.Field(i)
		bad := func(err error) error {
			return Errorf(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("query parameter %s=%q: %v", name, s, err), "")
		}
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(s)
		case reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return bad(err)
			}
			fv.SetBool(b)
		case reflect.Int, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, fv.Type().Bits())
			if err != nil {
				return bad(err)
			}
			fv.SetInt(n)
		case reflect.Uint, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(s, 10, fv.Type().Bits())
			if err != nil {
				return bad(err)
			}
			fv.SetUint(n)
		case reflect.Slice:
			fv.Set(reflect.ValueOf(strings.Split(s, ",")))
		}
	}
	return nil
}

func queryName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}
