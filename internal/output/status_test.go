package output

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestListStatusStyles: list writes the bare word in a pipe (what scripts match), the symbol
// and word on a terminal, and in colour unless NO_COLOR; in every style the word is the same,
// and in colour the columns after STATUS still line up under their headings once the escapes
// are gone (a person sees a straight table).
func TestListStatusStyles(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	recs := []state.Record{
		{TaskID: "a1", Tool: "sleep", Era: string(rpc.EraModern), Status: "working", CreatedAt: now.Add(-time.Minute)},
		{TaskID: "b2", Tool: "ask", Era: string(rpc.EraModern), Status: "input_required", CreatedAt: now.Add(-time.Minute)},
		{TaskID: "c3", Tool: "build", Era: string(rpc.EraModern), Status: "completed", CreatedAt: now.Add(-time.Minute)},
		{TaskID: "d4", Tool: "odd", Era: string(rpc.EraModern), Status: "teleport\x1b[2Jing", CreatedAt: now.Add(-time.Minute)},
	}
	text := func(s StatusStyle) string {
		var b bytes.Buffer
		if err := (Listing{Records: recs, Style: s}).Text(&b, now); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain, sym, col := text(StatusPlain), text(StatusSymbol), text(StatusColor)
	if strings.Contains(plain, "✓") || !strings.Contains(plain, " completed ") || !strings.Contains(plain, " input_required ") {
		t.Errorf("a pipe gets the bare words:\n%s", plain)
	}
	if !strings.Contains(sym, "✓ completed") || !strings.Contains(sym, "? input_required") || strings.Contains(sym, "\x1b") {
		t.Errorf("NO_COLOR on a terminal keeps symbol and word, without escapes:\n%s", sym)
	}
	if !strings.Contains(col, "\x1b[32m✓ completed\x1b[0m") {
		t.Errorf("a terminal gets completed in green:\n%q", col)
	}
	if strings.Contains(col, "\x1b[2J") || strings.Contains(sym, "\x1b[2J") {
		t.Errorf("a server's status reached the terminal with its escape:\n%q", col)
	}
	stripped := sgr.ReplaceAllString(col, "")
	if stripped != sym {
		t.Errorf("colour changed the layout:\n%s\nvs\n%s", stripped, sym)
	}
	lines := strings.Split(strings.TrimSpace(stripped), "\n")
	at := strings.Index(lines[0], "AGE")
	for _, l := range lines[1:] {
		if r := []rune(l); len(r) <= at || !strings.HasPrefix(string(r[at:]), "1m00s") {
			t.Errorf("AGE is not under its heading in %q (heading at %d)", l, at)
		}
	}
}
