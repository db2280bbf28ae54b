package follow

import (
	"context"
	"sync"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// Following many ledger records at once (watch, resume): one connection per server, era and
// 2025-11-25 session, all connected at once, a server that cannot be reached failing only its
// own tasks.

// Group is the tasks followed on one connection.
type Group struct {
	// Name is the server as events name it; Key is its ledger key (state.Server.Key).
	Name, Key string
	Records   []state.Record
	// Connect reaches the server with the engine's client options (Server.ClientOptions).
	Connect func(context.Context, rpc.ClientOptions) (*rpc.Client, error)
}

// Groups gathers ledger records into one Group per connection, in the order first seen.
type Groups struct {
	List  []*Group
	byKey map[string]*Group
}

// Add puts r in the group of its connection (server, era and session), made by newGroup when
// r is its first record. An isolated record (one that may not be resumed as it stands, see
// connect.Connector.Check) gets a group of its own: it must neither lend its credentials to the
// user's records nor take the user's tasks down with it.
func (gs *Groups) Add(r state.Record, isolated bool, newGroup func() *Group) {
	if gs.byKey == nil {
		gs.byKey = map[string]*Group{}
	}
	k := r.Server.Key() + "\x00" + r.Era + "\x00" + r.SessionID
	if isolated {
		k += "\x00untrusted\x00" + r.TaskID
	}
	g := gs.byKey[k]
	if g == nil {
		g = newGroup()
		gs.byKey[k] = g
		gs.List = append(gs.List, g)
	}
	g.Records = append(g.Records, r)
}

// FollowGroups connects every group at once and hands its tasks to e; a server that cannot be
// reached fails its own tasks only. It returns the task ids in order, the keys already answered
// of each task, and the clients to close when the run ends.
func (e *Engine) FollowGroups(ctx context.Context, groups []*Group) (ids []string, answered map[string][]string, clients []*rpc.Client) {
	answered = map[string][]string{}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, g := range groups {
		srv := e.Server(g.Name, g.Key)
		targets := make([]Target, 0, len(g.Records))
		for i := range g.Records {
			r := &g.Records[i]
			targets = append(targets, Target{ID: r.TaskID, Tool: r.Tool, Record: r})
			ids = append(ids, r.TaskID)
			if len(r.AnsweredKeys) > 0 {
				answered[r.TaskID] = r.AnsweredKeys // a resumed view never offers them again
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := g.Connect(ctx, srv.ClientOptions(rpc.ClientOptions{}))
			if err != nil {
				srv.Unreachable(err, targets...)
				return
			}
			mu.Lock()
			clients = append(clients, c)
			mu.Unlock()
			srv.Follow(c, targets...)
		}()
	}
	wg.Wait()
	return ids, answered, clients
}
