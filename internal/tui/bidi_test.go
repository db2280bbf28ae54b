package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// TestFormatControlsAndHugeStringsNeverReachTheFrame: bidirectional overrides and isolates,
// direction marks and invisible characters in every server string are gone from every screen,
// and a 1 MiB status message, error or result costs a frame no more than a long one.
func TestFormatControlsAndHugeStringsNeverReachTheFrame(t *testing.T) {
	const evil = "access\u202e\u2066level\u2069\u200e\u200f\u061c\u200b\ufeff\U000E0041\u2060 admin"
	huge := evil + strings.Repeat("x", 1<<20)
	m := New(newFake(), nil, []string{"t", "u"}, map[string]Snapshot{
		"t": {TaskID: "t", Tool: evil, Server: evil, Status: "input_required", StatusMessage: huge, CreatedAt: t0,
			Inputs: []InputRequest{{Key: evil, Kind: evil, Message: huge}}},
		"u": {TaskID: "u", Status: "failed", Result: huge, StatusMessage: huge},
	}, Options{Now: func() time.Time { return t0 }, NoColor: true, Server: evil})
	m = batch(m, Update{TaskID: "t", Err: huge, Failures: 1, Note: huge}, Update{TaskID: "u", Done: true, Ended: huge})
	frames := []string{m.View().Content}
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	frames = append(frames, m.View().Content)
	m, _ = update(m, tea.KeyPressMsg{Code: 'i', Text: "i"})
	frames = append(frames, m.View().Content)
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyEscape})
	m, _ = update(m, tea.KeyPressMsg{Code: tea.KeyDown})
	frames = append(frames, m.View().Content)
	for i, frame := range frames {
		if strings.ContainsAny(frame, "\u202e\u2066\u2069\u200e\u200f\u061c\u200b\ufeff\U000E0041\u2060") {
			t.Errorf("frame %d holds a format control: %q", i, frame)
		}
		if len(frame) > 64<<10 {
			t.Errorf("frame %d is %d bytes", i, len(frame))
		}
	}
	if !strings.Contains(frames[0], "accesslevel") {
		t.Errorf("the text itself is missing: %q", frames[0])
	}
}
