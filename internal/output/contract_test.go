package output

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docsContract is the page that describes the JSON contract to users.
const docsContract = "../../docs/guide/output.md"

// documented maps each "type" the docs show to the structs an object of that type may be.
var documented = map[string][]any{
	"created": {Envelope{}}, "task": {Envelope{}}, "result": {Envelope{}}, "cancel": {Envelope{}},
	"tools": {Envelope{}}, "list": {Envelope{}}, "watch": {Envelope{}}, "resume": {Envelope{}},
	"status":         {StatusEvent{}},
	"progress":       {ProgressEvent{}},
	"input_required": {InputRequiredEvent{}, Envelope{}},
	"error":          {Error{}, PollErrorEvent{}},
	"update":         {Update{}}, "forget": {Forget{}}, "prune": {Prune{}}, "check": {Check{}},
	"auth-login": {AuthLogin{}}, "auth-status": {AuthStatus{}}, "auth-logout": {AuthLogout{}},
	"adopt": {Adopt{}}, "servers": {Servers{}}, "tool": {ToolDoc{}},
}

// TestDocsMatchContract keeps the prose of the JSON contract and the structs that write it
// together: every key an example in the docs shows is a field of the struct its type is written
// with, and every field of those structs is shown by some example. Wire objects the server
// sent (task, result, ack, …) and the ledger's records are not the contract's and not checked.
func TestDocsMatchContract(t *testing.T) {
	page, err := os.ReadFile(docsContract)
	if err != nil {
		t.Fatal(err)
	}
	examples := jsonExamples(string(page))
	if len(examples) < len(documented) {
		t.Fatalf("found %d JSON examples in %s, want at least one per type (%d)", len(examples), docsContract, len(documented))
	}
	shown := map[reflect.Type]map[string]bool{}
	for _, ex := range examples {
		typ := typeOf(ex)
		cands, ok := documented[typ]
		if !ok {
			t.Errorf("%s shows an object of type %q that no struct writes: %s", docsContract, typ, ex)
			continue
		}
		var problems []string
		fits := false
		for _, c := range cands {
			bad := missingKeys(reflect.TypeOf(c), keysOf(ex), shown)
			if len(bad) == 0 {
				fits = true
			}
			problems = append(problems, reflect.TypeOf(c).Name()+" has no "+strings.Join(bad, ", "))
		}
		if !fits {
			t.Errorf("%s: example %s names keys the contract does not have: %s", docsContract, ex, strings.Join(problems, "; "))
		}
	}
	for _, cands := range documented {
		for _, c := range cands {
			checkShown(t, reflect.TypeOf(c), shown)
		}
	}
	// The envelope's fields as the prose lists them.
	m := regexp.MustCompile(`small envelope \(([^)]*)\)`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("%s no longer lists the envelope's fields ('small envelope (…)')", docsContract)
	}
	tags := jsonTags(reflect.TypeOf(Envelope{}))
	for _, w := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(m[1], -1) {
		if !slices.Contains(tags, w[1]) {
			t.Errorf("%s lists envelope field %q, which Envelope does not have", docsContract, w[1])
		}
	}
}

// checkShown reports the fields of t (and of the contract structs inside it) no example shows.
func checkShown(t *testing.T, typ reflect.Type, shown map[reflect.Type]map[string]bool) {
	t.Helper()
	for _, tag := range jsonTags(typ) {
		if !shown[typ][tag] {
			t.Errorf("%s: no example shows %s's field %q; document it", docsContract, typ.Name(), tag)
		}
		if sub := fieldType(typ, tag); sub != nil && sub != typ {
			checkShown(t, sub, shown)
		}
	}
}

// missingKeys returns the keys (path/key) that typ has no field for, and records in shown the
// keys it has, once it fits.
func missingKeys(typ reflect.Type, keys [][]string, shown map[reflect.Type]map[string]bool) []string {
	var bad []string
	var hits [][2]any
	for _, k := range keys {
		at := typ
		for _, step := range k[:len(k)-1] {
			if at = fieldType(at, step); at == nil {
				break // inside a wire object or the ledger's records: not the contract's
			}
		}
		if at == nil {
			continue
		}
		if !slices.Contains(jsonTags(at), k[len(k)-1]) {
			bad = append(bad, strings.Join(k, "."))
			continue
		}
		hits = append(hits, [2]any{at, k[len(k)-1]})
	}
	if len(bad) == 0 {
		for _, h := range hits {
			at := h[0].(reflect.Type)
			if shown[at] == nil {
				shown[at] = map[string]bool{}
			}
			shown[at][h[1].(string)] = true
		}
	}
	return bad
}

// fieldType is the struct type of typ's field with JSON name tag (through slices and
// pointers), or nil when that field holds no contract struct.
func fieldType(typ reflect.Type, tag string) reflect.Type {
	for i := range typ.NumField() {
		f := typ.Field(i)
		if strings.Split(f.Tag.Get("json"), ",")[0] != tag {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == typ.PkgPath() {
			return ft
		}
	}
	return nil
}

func jsonTags(typ reflect.Type) []string {
	var tags []string
	for i := range typ.NumField() {
		if tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; tag != "" && tag != "-" {
			tags = append(tags, tag)
		}
	}
	return tags
}

// jsonExamples returns the JSON objects of type … the page shows: the lines of its json
// blocks and its inline code that begin with {"type":.
func jsonExamples(page string) []string {
	var out []string
	inBlock := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock = line == "```json"
		case inBlock && strings.HasPrefix(line, `{"type":`):
			out = append(out, line)
		}
	}
	for _, m := range regexp.MustCompile("`(\\{\"type\":[^`]*)`").FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

func typeOf(ex string) string {
	m := regexp.MustCompile(`^\{"type":"([^"]*)"`).FindStringSubmatch(ex)
	if m == nil {
		return ""
	}
	return m[1]
}

// keysOf returns every key of an example with the keys of the objects it sits in, as paths
// (["tasks","code"]). Examples elide with …, so they are scanned, not parsed.
func keysOf(ex string) [][]string {
	type frame struct {
		obj  bool
		path []string
		last string
	}
	stack := []frame{{obj: false}}
	var keys [][]string
	for i := 0; i < len(ex); i++ {
		top := &stack[len(stack)-1]
		switch c := ex[i]; c {
		case '"':
			j := i + 1
			for j < len(ex) && ex[j] != '"' {
				if ex[j] == '\\' {
					j++
				}
				j++
			}
			s := ex[i+1 : min(j, len(ex))]
			i = j
			if top.obj && i+1 < len(ex) && ex[i+1] == ':' {
				top.last = s
				keys = append(keys, append(slices.Clone(top.path), s))
			}
		case '{', '[':
			path := top.path
			if top.obj {
				path = append(slices.Clone(top.path), top.last)
			}
			stack = append(stack, frame{obj: c == '{', path: path})
		case '}', ']':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return keys
}
