package proxy

import (
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
	"github.com/mcptask/mcptask/internal/rpc"
)

// TestRelayRefusesUnusableTaskIDs: a server that creates a task with an id holding control
// characters gets its answer relayed to the host unchanged (the host's own client refuses
// it), but the id reaches neither the ledger nor the live view; a notice says why.
func TestRelayRefusesUnusableTaskIDs(t *testing.T) {
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		t.Run(era, func(t *testing.T) {
			r := newRig(t, hostile.Start(t, "size-bad-task-id-control", demo.Options{}).URL)
			c := client(t, r.url, era)
			_, err := c.CallTool(t.Context(), rpc.CallParams{Name: "sleep", Arguments: map[string]any{"seconds": 1}})
			if !strings.Contains(err.Error(), "unusable task id") {
				t.Fatalf("the host's call: %v", err)
			}
			if created := r.ev.of(EventCreated); len(created) != 0 {
				t.Errorf("created events %+v", created)
			}
			if n := r.ev.of(EventNotice); len(n) != 1 || !strings.Contains(n[0].Text, "not in the ledger") || strings.Contains(n[0].Text, "\x1b") {
				t.Errorf("notices %+v", n)
			}
			if f, err := r.store.Load(); err != nil || len(f.Tasks) != 0 {
				t.Errorf("ledger: %+v, %v", f, err)
			}
		})
	}
}
