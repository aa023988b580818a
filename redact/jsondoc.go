package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// jsonNode is one token of a JSON document with the bytes before it (whitespace, a colon
// or a comma), so the document is written back as it came, only its values replaced.
type jsonNode struct {
	pre, lit []byte
	tok      json.Token
	// An object's keys and values (keys[i] names elems[i]); an array's elements.
	keys, elems []*jsonNode
	// closing is the closing bracket of an object or array, with the bytes before it.
	closing []byte
}

// parseJSON reads one JSON document. src must be valid JSON (json.Valid), which also
// bounds its nesting.
func parseJSON(src []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var off int64
	next := func() (*jsonNode, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		end := dec.InputOffset()
		span := src[off:end]
		off = end
		i := bytes.IndexFunc(span, func(r rune) bool { return !strings.ContainsRune(" \t\r\n,:", r) })
		if i < 0 {
			i = len(span)
		}
		return &jsonNode{pre: span[:i], lit: span[i:], tok: tok}, nil
	}
	var value func(n *jsonNode) error
	value = func(n *jsonNode) error {
		d, ok := n.tok.(json.Delim)
		if !ok {
			return nil
		}
		for dec.More() {
			if d == '{' {
				k, err := next()
				if err != nil {
					return err
				}
				n.keys = append(n.keys, k)
			}
			v, err := next()
			if err != nil {
				return err
			}
			if err := value(v); err != nil {
				return err
			}
			n.elems = append(n.elems, v)
		}
		c, err := next()
		if err != nil {
			return err
		}
		n.closing = slices.Concat(c.pre, c.lit) // never append into the input
		return nil
	}
	root, err := next()
	if err != nil {
		return nil, err
	}
	if err := value(root); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("redact: text after the JSON document")
	}
	return root, nil
}

// countKey matches the names of fields that hold counts even though they are named like
// credentials: input_tokens, max_tokens, cache_read_input_tokens, token_count, maxTokens.
var countWords = map[string]bool{
	"tokens": true, "count": true, "num": true, "max": true, "min": true, "total": true, "limit": true,
	"budget": true, "length": true, "len": true, "size": true, "used": true, "usage": true, "remaining": true,
	"ttl": true, "expires": true, "timeout": true, "index": true, "version": true,
}

// isCountName reports whether name has a word (split at _ . - and lower-to-upper case
// changes) that makes a number under it a count, not a credential.
func isCountName(name string) bool {
	var words []string
	start := 0
	rs := []rune(name)
	for i := 1; i <= len(rs); i++ {
		if i == len(rs) || strings.ContainsRune("_.-", rs[i]) || (unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1])) {
			words = append(words, strings.ToLower(strings.Trim(string(rs[start:i]), "_.-")))
			start = i
		}
	}
	for _, w := range words {
		if countWords[w] {
			return true
		}
	}
	return false
}

// headerKey names a field holding a whole Authorization or Cookie header value.
var headerKey = regexp.MustCompile(`(?i)^(?:proxy-)?authorization$|^(?:set-)?cookie$`)

var markerLit = []byte(`"` + Marker + `"`)

// jsonRedactor redacts a parsed document in place.
type jsonRedactor struct{ secrets []string }

func (r jsonRedactor) containsSecret(b []byte) bool {
	for _, v := range r.secrets {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	return false
}

// text redacts a string found in the document: a string that is itself a JSON document
// (tool arguments, a nested event) keeps its structure too.
func (r jsonRedactor) text(s string) string {
	if isJSONDoc(s) {
		if out, ok := r.document([]byte(s)); ok {
			return string(out)
		}
	}
	return StringWithSecrets(s, r.secrets)
}

// setString replaces n's literal by s encoded, unless it is the same string.
func (r jsonRedactor) setString(n *jsonNode, orig, s string) {
	if s != orig {
		n.lit = encodeString(s)
	}
	if r.containsSecret(n.lit) {
		// The value is hidden in its decoded form; its escaped form still spells it.
		n.lit = markerLit
	}
}

func (r jsonRedactor) node(n *jsonNode, key string, haveKey bool) {
	switch t := n.tok.(type) {
	case string:
		switch {
		case t == "" || t == Marker:
		case haveKey && (secretKey.MatchString(key) || headerKey.MatchString(key)) && !variableRef.MatchString(t):
			n.lit = markerLit
		default:
			r.setString(n, t, r.text(t))
		}
	case json.Number:
		if haveKey && secretKey.MatchString(key) && !isCountName(key) || r.containsSecret(n.lit) {
			n.lit = markerLit
		}
	case json.Delim:
		if t == '{' {
			for i, k := range n.keys {
				name, _ := k.tok.(string)
				r.setString(k, name, StringWithSecrets(name, r.secrets))
				r.node(n.elems[i], name, true)
			}
			return
		}
		r.array(n)
	default: // true, false, null
		if r.containsSecret(n.lit) {
			n.lit = markerLit
		}
	}
}

// array redacts a list of strings as a command line (a flag and its value in two
// words), any other list element by element.
func (r jsonRedactor) array(n *jsonNode) {
	words := make([]string, len(n.elems))
	for i, e := range n.elems {
		s, ok := e.tok.(string)
		if !ok {
			for _, e := range n.elems {
				r.node(e, "", false)
			}
			return
		}
		words[i] = s
	}
	for i, w := range Argv(words) {
		if isJSONDoc(words[i]) {
			w = words[i]
		}
		r.setString(n.elems[i], words[i], r.text(w))
	}
}

func (n *jsonNode) write(b *bytes.Buffer) {
	b.Write(n.pre)
	b.Write(n.lit)
	if _, ok := n.tok.(json.Delim); !ok {
		return
	}
	for i, e := range n.elems {
		if n.keys != nil {
			n.keys[i].write(b)
		}
		e.write(b)
	}
	b.Write(n.closing)
}

// document redacts a JSON document, keeping everything but the values it replaces; ok
// is false when doc is not one JSON document.
func (r jsonRedactor) document(doc []byte) ([]byte, bool) {
	if !json.Valid(doc) {
		return nil, false
	}
	root, err := parseJSON(doc)
	if err != nil {
		return nil, false
	}
	r.node(root, "", false)
	var b bytes.Buffer
	root.write(&b)
	b.Write(doc[len(bytes.TrimRight(doc, " \t\r\n")):])
	if r.containsSecret(b.Bytes()) {
		// A value spanning the punctuation: the text rules hide it, whatever that breaks.
		return []byte(StringWithSecrets(string(doc), r.secrets)), true
	}
	return b.Bytes(), true
}

// isJSONDoc reports whether s is a JSON object or array.
func isJSONDoc(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t))
}

func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}
