package termsafe

import (
	"encoding/json"
	"testing"
)

// TestJSON: what encoding/json leaves raw (C1 controls, bidi overrides, zero-width and tag
// characters) is escaped, so that a terminal shows none of it, and the JSON still decodes to
// exactly the same value.
func TestJSON(t *testing.T) {
	in := map[string]string{"message": "a\u009b31m b\u202egnp.exe\u202c c\u200bd \U000E0041 e\u2028f\x1b[2J\r\nmcptask: ok é"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(raw)
	if isClean(string(got)) == false {
		t.Errorf("JSON left something a terminal acts on: %q", got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["message"] != in["message"] {
		t.Errorf("JSON changed the value: %q (%v), want %q", back["message"], err, in["message"])
	}
	clean := []byte(`{"a":"plain é"}`)
	if out := JSON(clean); &out[0] != &clean[0] {
		t.Errorf("clean JSON was copied")
	}
}
