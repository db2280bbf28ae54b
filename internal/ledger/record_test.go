package ledger

import (
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestSeenAt: a record says when its status was seen. The same status seen again moves
// SeenAt only once it is SeenEvery old, so a follow that learns nothing new leaves the record
// as it was (and the ledger unwritten); a new status or message moves it at once.
func TestSeenAt(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	working := &rpc.Task{TaskID: "a", Status: rpc.StatusWorking, StatusMessage: "step 1/5"}
	r := NewRecord(Origin{Server: state.Server{URL: srvURL}, Tool: "slow"}, working, t0)
	if !r.SeenAt.Equal(t0) {
		t.Fatalf("a new record is seen when it is created: %v, want %v", r.SeenAt, t0)
	}
	applyTask(&r, working, t0.Add(10*time.Second))
	if !r.SeenAt.Equal(t0) {
		t.Errorf("the same status 10s later must not move SeenAt (it would rewrite the ledger at every poll): %v", r.SeenAt)
	}
	applyTask(&r, working, t0.Add(SeenEvery))
	if !r.SeenAt.Equal(t0.Add(SeenEvery)) {
		t.Errorf("the same status SeenEvery later must move SeenAt: %v", r.SeenAt)
	}
	next := &rpc.Task{TaskID: "a", Status: rpc.StatusWorking, StatusMessage: "step 2/5"}
	applyTask(&r, next, t0.Add(SeenEvery+time.Second))
	if !r.SeenAt.Equal(t0.Add(SeenEvery + time.Second)) {
		t.Errorf("a new message must move SeenAt at once: %v", r.SeenAt)
	}
	if r.Seen() != r.SeenAt {
		t.Errorf("Seen = %v, want SeenAt", r.Seen())
	}
	old := state.Record{SavedAt: t0}
	if !old.Seen().Equal(t0) {
		t.Errorf("a record from before seenAt is seen when it was saved: %v", old.Seen())
	}
}
