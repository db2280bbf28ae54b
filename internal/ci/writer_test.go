package ci

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/ci/citest"
)

// TestWriterStopsInjectionsSplitAcrossWrites: a command whose line comes in pieces (the way
// a result is printed block by block) is still neutralised, because the writer holds a line
// until it ends; and nothing harmless is changed.
func TestWriterStopsInjectionsSplitAcrossWrites(t *testing.T) {
	for _, text := range attacks {
		for cut := 0; cut <= len(text); cut++ {
			var buf bytes.Buffer
			w := &Writer{W: &buf, Sys: GitHub}
			_, _ = w.Write([]byte("result: "))
			_, _ = w.Write([]byte("\n" + text[:cut]))
			_, _ = w.Write([]byte(text[cut:]))
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			var r citest.Runner
			r.Feed(buf.String())
			if len(r.Ran) != 0 {
				t.Fatalf("%q cut at %d: the runner would run %+v from\n%s", text, cut, r.Ran, buf.String())
			}
			for _, line := range lineBreaks.Split(text, -1) {
				if !strings.Contains(buf.String(), line) {
					t.Fatalf("%q cut at %d: every line of the text must reach the log; got\n%s", text, cut, buf.String())
				}
			}
		}
	}
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: GitHub}
	_, _ = w.Write([]byte("2026-11-25T10:00:00Z abc working step 1\n"))
	if got := buf.String(); got != "2026-11-25T10:00:00Z abc working step 1\n" {
		t.Errorf("a complete harmless line passes at once and unchanged, got %q", got)
	}
	_, _ = w.Write([]byte("no end yet"))
	if buf.Len() != len("2026-11-25T10:00:00Z abc working step 1\n") {
		t.Errorf("a line without its end waits for it: %q", buf.String())
	}
	_ = w.Flush()
	if !strings.HasSuffix(buf.String(), "no end yet") {
		t.Errorf("Flush passes the rest on: %q", buf.String())
	}
}

// TestWriterKeepsJSONReadable: in JSON mode the legacy ##[ form is escaped inside strings, so
// the runner runs nothing and a JSON reader gets the very same string back.
func TestWriterKeepsJSONReadable(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, Sys: GitHub, JSON: true}
	in, _ := json.Marshal(map[string]string{"text": "x ##[set-env name=PATH]/evil\n::error::y"})
	_, _ = w.Write(append(in, '\n'))
	var r citest.Runner
	r.Feed(buf.String())
	if len(r.Ran) != 0 {
		t.Errorf("the runner would run %+v from %s", r.Ran, buf.String())
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["text"] != "x ##[set-env name=PATH]/evil\n::error::y" {
		t.Errorf("the JSON must read back the same: %v %q", err, back["text"])
	}
}

// TestWriterPassesThroughOutsideGitHub: other systems' logs run no commands from text.
func TestWriterPassesThroughOutsideGitHub(t *testing.T) {
	for _, sys := range []System{None, GitLab} {
		var buf bytes.Buffer
		w := &Writer{W: &buf, Sys: sys}
		_, _ = w.Write([]byte("::error::x"))
		if buf.String() != "::error::x" {
			t.Errorf("%v: got %q", sys, buf.String())
		}
	}
}
