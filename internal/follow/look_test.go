package follow

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestLookKeepsTheLedgerInStep: one tasks/get through the guard; with Status the status seen
// lands in the record, without it the record is left to the engine; a task the server does
// not know is marked expired; a task without a record writes nothing.
func TestLookKeepsTheLedgerInStep(t *testing.T) {
	url, rec := demoServer(t, demo.Options{})
	path := ledgerPath(t)
	st := state.Open(path)
	key := state.Server{URL: url}.Key()
	c := connectWith(t, url, rpc.VersionLegacy, rpc.ClientOptions{})
	tk := create(t, c, url, "sleep", map[string]any{"seconds": 0}, path)
	r := records(t, path)[0]
	waitStatus(t, c, tk.TaskID, rpc.StatusCompleted)
	var guarded []string
	guard := func(ctx context.Context, what string, req func(context.Context) error) error {
		guarded = append(guarded, what)
		return req(ctx)
	}
	look := func(r LookRequest) (*rpc.Task, error) {
		led := ledger.New(st, ledger.Options{})
		defer led.Close()
		r.Ledger, r.Key, r.Guard = led, key, guard
		return Look(t.Context(), c, r)
	}

	if got, err := look(LookRequest{TaskID: tk.TaskID, Record: &r}); err != nil || got.Status != rpc.StatusCompleted {
		t.Fatalf("Look: %+v, %v", got, err)
	}
	if s := records(t, path)[0].Status; s != string(rpc.StatusWorking) {
		t.Errorf("without Status the record says %s; want it left as it was (working)", s)
	}
	if _, err := look(LookRequest{TaskID: tk.TaskID, Record: &r, Status: true}); err != nil {
		t.Fatal(err)
	}
	if s := records(t, path)[0].Status; s != string(rpc.StatusCompleted) {
		t.Errorf("with Status the record says %s; want completed", s)
	}

	gone := state.Record{TaskID: "no-such-task", Server: state.Server{URL: url}, Era: string(c.Era()), CreatedAt: time.Now()}
	if err := st.Put(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := look(LookRequest{TaskID: gone.TaskID}); !rpc.IsUnknownTask(err) {
		t.Fatalf("an unknown task: %v", err)
	}
	if x := records(t, path)[1]; x.Expired {
		t.Errorf("a look without the record wrote to it: %+v", x)
	}
	if _, err := look(LookRequest{TaskID: gone.TaskID, Record: &gone}); !rpc.IsUnknownTask(err) {
		t.Fatalf("an unknown task: %v", err)
	}
	if x := records(t, path)[1]; !x.Expired {
		t.Errorf("an unknown task is not marked expired: %+v", x)
	}
	if want := slices.Repeat([]string{"tasks/get"}, 4); !slices.Equal(guarded, want) || countOf(rec.Methods(), "tasks/get") < 4 {
		t.Errorf("guarded %v; want each look's one tasks/get through the guard", guarded)
	}
}
