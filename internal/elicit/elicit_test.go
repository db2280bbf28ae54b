package elicit

import (
	"encoding/json"
	"testing"
)

const schema = `{"type":"object","properties":{
	"zeta":{"type":"boolean","title":"Go ahead?"},
	"count":{"type":"integer","minimum":1,"maximum":10},
	"ratio":{"type":"number","minimum":0.5},
	"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"tags":{"type":"array","items":{"enum":["a","b"]}},
	"name":{"type":"string","minLength":2,"maxLength":3},
	"code":{"type":"string","pattern":"^[A-Z]+$"}},
	"required":["count"]}`

// TestFieldsOrder: the fields come in the order the server wrote them, not sorted, with the
// titles of a oneOf and the enumNames of a legacy enum beside their values.
func TestFieldsOrder(t *testing.T) {
	fs := Fields(json.RawMessage(schema))
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	want := []string{"zeta", "count", "ratio", "color", "size", "tags", "name", "code"}
	if len(names) != len(want) {
		t.Fatalf("fields %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("fields %v, want %v", names, want)
		}
	}
	if fs[4].EnumNames[1] != "Large" || fs[3].EnumNames[0] != "Red" || !fs[1].Required || fs[0].Label() != "Go ahead?" {
		t.Errorf("fields lost what the schema says: %+v", fs)
	}
}

// TestCheck: each kind of mistake is refused with words naming the field and what is allowed;
// what fits passes. The pattern is a keyword the form does not know: the JSON Schema library
// still refuses it.
func TestCheck(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{`{"count":3,"zeta":true,"ratio":0.5,"color":"red","size":"l","tags":["a"],"name":"ab","code":"AB"}`, ""},
		{`{}`, `field "count" is required`},
		{`{"count":11}`, `field "count" must be at most 10`},
		{`{"count":0}`, `field "count" must be at least 1`},
		{`{"count":1.5}`, `field "count" must be a whole number`},
		{`{"count":"3"}`, `field "count" must be a number`},
		{`{"count":1,"ratio":0.1}`, `field "ratio" must be at least 0.5`},
		{`{"count":1,"zeta":"yes"}`, `field "zeta" must be true or false`},
		{`{"count":1,"color":"blue"}`, `field "color" must be one of "red", "green"`},
		{`{"count":1,"size":"Large"}`, `field "size" must be one of "s", "l"`},
		{`{"count":1,"tags":["c"]}`, `field "tags" may hold only one of "a", "b"`},
		{`{"count":1,"name":"a"}`, `field "name" must be at least 2 characters`},
		{`{"count":1,"name":"abcd"}`, `field "name" must be at most 3 characters`},
		{`{"count":1,"code":"ab"}`, `field "code" does not fit the schema`},
		{`{"count":1,"extra":1}`, `field "extra" is not in the requested schema`},
		{`[1]`, `content must be a JSON object`},
	} {
		err := Check(json.RawMessage(schema), json.RawMessage(c.content))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.content, err)
		case c.want != "" && (err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want):
			t.Errorf("%s: got %v, want %q", c.content, err, c.want)
		}
	}
}

// TestText: typed text becomes a number for a number field and stays text otherwise.
func TestText(t *testing.T) {
	fs := Fields(json.RawMessage(schema))
	if v, err := fs[1].Text(" 7 "); err != nil || v != 7.0 {
		t.Errorf("count 7: %v %v", v, err)
	}
	if _, err := fs[1].Text("seven"); err == nil || err.Error() != `field "count" must be a whole number` {
		t.Errorf("count seven: %v", err)
	}
	if v, err := fs[6].Text("ab"); err != nil || v != "ab" {
		t.Errorf("name ab: %v %v", v, err)
	}
}

// TestOrder: an object's keys in the order written, each once; nil when there is no object.
func TestOrder(t *testing.T) {
	got := Order(json.RawMessage(`{"inputRequests":{"b":1,"a":{"x":2},"c":[3]},"other":1}`), "inputRequests")
	if len(got) != 3 || got[0] != "b" || got[1] != "a" || got[2] != "c" {
		t.Errorf("Order = %v, want b a c", got)
	}
	for _, raw := range []string{`{}`, `{"inputRequests":[1]}`, `[]`, `x`} {
		if got := Order(json.RawMessage(raw), "inputRequests"); got != nil {
			t.Errorf("Order(%s) = %v, want nil", raw, got)
		}
	}
}
