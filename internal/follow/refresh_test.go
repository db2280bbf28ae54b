package follow

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestRefreshBoundsAndFailsSoft refreshes two servers at once: one answers (slowly), one
// never does. The answering server never has more than PerServer requests in flight and its
// records get the statuses it said; a task it does not know is marked expired and is no
// problem; the silent server costs no more than the deadline and is one problem for all its
// records, which keep what they had.
func TestRefreshBoundsAndFailsSoft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := ledgerPath(t)
		st := state.Open(path)
		good, silent := newMemServer(), newMemServer()
		maxTotal, total := 0, 0
		good.onGet = func(id string, n int) {
			good.mu.Lock()
			total++
			maxTotal = max(maxTotal, total)
			good.mu.Unlock()
			time.Sleep(100 * time.Millisecond) // a slow answer, on the bubble's clock
			good.mu.Lock()
			total--
			good.mu.Unlock()
		}
		gGood := &Group{Name: "good", Key: "good", Connect: func(context.Context, rpc.ClientOptions) (*rpc.Client, error) { return memClient(good), nil }}
		gSilent := &Group{Name: "silent", Key: "silent", Connect: func(context.Context, rpc.ClientOptions) (*rpc.Client, error) {
			return memClient(hungServer{silent}), nil
		}}
		var recs []state.Record
		for i := range 10 {
			id := fmt.Sprintf("t%d", i)
			good.script[id] = []step{{status: rpc.StatusCompleted}}
			r := state.Record{TaskID: id, Server: state.Server{URL: "http://good/mcp"}, Status: "working", Era: "2026-07-28"}
			gGood.Records = append(gGood.Records, r)
			recs = append(recs, r)
		}
		good.script["gone"] = []step{{unknown: true}}
		gone := state.Record{TaskID: "gone", Server: state.Server{URL: "http://good/mcp"}, Status: "working"}
		gGood.Records = append(gGood.Records, gone)
		for i := range 3 {
			r := state.Record{TaskID: fmt.Sprintf("s%d", i), Server: state.Server{URL: "http://silent/mcp"}, Status: "working"}
			gSilent.Records = append(gSilent.Records, r)
			recs = append(recs, r)
		}
		recs = append(recs, gone)
		if err := st.PutMany(recs); err != nil {
			t.Fatal(err)
		}
		gGood.Key, gSilent.Key = recs[0].Server.Key(), recs[10].Server.Key()

		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		led := ledger.New(st, ledger.Options{})
		start := time.Now()
		problems := Refresh(ctx, RefreshRequest{Groups: []*Group{gGood, gSilent}, Ledger: led, PerServer: 4})
		took := time.Since(start)
		led.Close()

		if took > 5*time.Second+time.Millisecond {
			t.Errorf("the refresh took %v, past its 5s deadline", took)
		}
		if maxTotal > 4 || maxTotal < 2 {
			t.Errorf("at most %d tasks/get were in flight on one server, want between 2 and PerServer (4)", maxTotal)
		}
		if len(problems) != 1 || problems[0].Group != gSilent || problems[0].TaskID != "" || problems[0].Err == nil {
			t.Fatalf("problems = %+v, want one: the silent server, all its records", problems)
		}
		for _, r := range records(t, path) {
			switch {
			case r.TaskID == "gone":
				if !r.Expired {
					t.Errorf("a task the server does not know must be marked expired: %+v", r)
				}
			case r.Server.URL == "http://good/mcp":
				if r.Status != "completed" || r.SeenAt.IsZero() {
					t.Errorf("%s: %q seen %v, want completed, seen now", r.TaskID, r.Status, r.SeenAt)
				}
			default:
				if r.Status != "working" || !r.SeenAt.IsZero() {
					t.Errorf("%s of the silent server must keep what it had: %+v", r.TaskID, r)
				}
			}
		}
	})
}

// hungServer takes every request and never answers, until the caller gives up.
type hungServer struct{ *memServer }

func (hungServer) RoundTrip(ctx context.Context, _ *rpc.Message, _ http.Header) (*rpc.Message, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
