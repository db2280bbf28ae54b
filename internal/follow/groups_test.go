package follow

import (
	"testing"

	"github.com/mcptask/mcptask/internal/state"
)

// TestGroupsByConnection: records share a group only when server, era and session are the
// same, and an isolated record never shares one, not even with an isolated record of the
// same connection.
func TestGroupsByConnection(t *testing.T) {
	a := state.Server{URL: "http://127.0.0.1:1/mcp"}
	b := state.Server{URL: "http://127.0.0.1:2/mcp"}
	recs := []struct {
		r        state.Record
		isolated bool
	}{
		{state.Record{TaskID: "1", Server: a, Era: "2026-07-28"}, false},
		{state.Record{TaskID: "2", Server: b, Era: "2026-07-28"}, false},
		{state.Record{TaskID: "3", Server: a, Era: "2026-07-28"}, false},
		{state.Record{TaskID: "4", Server: a, Era: "2025-11-25", SessionID: "s1"}, false},
		{state.Record{TaskID: "5", Server: a, Era: "2025-11-25", SessionID: "s2"}, false},
		{state.Record{TaskID: "6", Server: a, Era: "2026-07-28"}, true},
		{state.Record{TaskID: "7", Server: a, Era: "2026-07-28"}, true},
	}
	var gs Groups
	made := 0
	for _, x := range recs {
		gs.Add(x.r, x.isolated, func() *Group { made++; return &Group{Name: x.r.TaskID} })
	}
	var got [][]string
	for _, g := range gs.List {
		var ids []string
		for _, r := range g.Records {
			ids = append(ids, r.TaskID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"1", "3"}, {"2"}, {"4"}, {"5"}, {"6"}, {"7"}}
	if made != len(want) || len(got) != len(want) {
		t.Fatalf("groups = %v (made %d), want %v", got, made, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) || got[i][0] != want[i][0] || got[i][len(got[i])-1] != want[i][len(want[i])-1] {
			t.Errorf("group %d = %v, want %v", i, got[i], want[i])
		}
	}
}
