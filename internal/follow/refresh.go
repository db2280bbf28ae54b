package follow

import (
	"context"
	"slices"
	"sync"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Refreshing the ledger's records (mcptask list --refresh): one tasks/get per record, a few at
// a time on each connection and a few connections at a time, every status seen written to the
// ledger, and a server that cannot be reached failing its own records only. Nothing waits for
// a task to change: a refresh is a look, not a follow.

// RefreshRequest is the records to refresh, grouped by connection (Groups.Add).
type RefreshRequest struct {
	Groups []*Group
	// Ledger gets the statuses seen and the tasks a server no longer knows.
	Ledger *ledger.Writer
	// Guard bounds each request of the group's server (nil: only ctx does).
	Guard func(g *Group) Guard
	// Servers is how many connections are open at once, PerServer how many tasks/get each
	// has in flight (DefaultRefreshServers, DefaultRefreshPerServer when zero).
	Servers, PerServer int
}

// The default bounds of a refresh: enough to refresh a ledger of a hundred tasks on a few
// servers in a few round trips, few enough that no server sees a burst.
const (
	DefaultRefreshServers   = 8
	DefaultRefreshPerServer = 4
)

// RefreshProblem is a record a refresh could not bring up to date: TaskID "" means every
// record of Group (its server could not be reached, or failed them all; Err is the first).
type RefreshProblem struct {
	Group  *Group
	TaskID string
	Err    error
}

// Refresh looks at every record of r.Groups once and returns what it could not refresh, in
// the order of the groups. A task its server does not know is no problem: it is marked
// expired, which is what there is to know about it. When ctx ends, the records not looked at
// yet are problems with ctx's error.
func Refresh(ctx context.Context, r RefreshRequest) []RefreshProblem {
	servers, per := r.Servers, r.PerServer
	if servers <= 0 {
		servers = DefaultRefreshServers
	}
	if per <= 0 {
		per = DefaultRefreshPerServer
	}
	problems := make([][]RefreshProblem, len(r.Groups))
	slots := make(chan struct{}, servers)
	var wg sync.WaitGroup
	for i, g := range r.Groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				problems[i] = []RefreshProblem{{Group: g, Err: context.Cause(ctx)}}
				return
			}
			var guard Guard
			if r.Guard != nil {
				guard = r.Guard(g)
			}
			problems[i] = refreshGroup(ctx, g, r.Ledger, guard, per)
		}()
	}
	wg.Wait()
	var out []RefreshProblem
	for _, p := range problems {
		out = append(out, p...)
	}
	return out
}

// refreshGroup looks at the records of g on one connection, per at a time.
func refreshGroup(ctx context.Context, g *Group, led *ledger.Writer, guard Guard, per int) []RefreshProblem {
	c, err := g.Connect(ctx, rpc.ClientOptions{})
	if err != nil {
		return []RefreshProblem{{Group: g, Err: err}}
	}
	defer c.Close()
	errs := make([]error, len(g.Records))
	var wg sync.WaitGroup
	slots := make(chan struct{}, per)
	for i := range g.Records {
		rec := &g.Records[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
			}
			err := ctx.Err()
			if err == nil {
				_, err = Look(ctx, c, LookRequest{TaskID: rec.TaskID, Key: g.Key, Record: rec, Ledger: led, Status: true, Guard: guard})
			} else {
				err = context.Cause(ctx)
			}
			if !rpc.IsUnknownTask(err) {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	// A server that failed every record (it went down, say) is one problem, not one a task.
	if len(errs) > 1 && !slices.Contains(errs, nil) {
		return []RefreshProblem{{Group: g, Err: errs[0]}}
	}
	var problems []RefreshProblem
	for i, err := range errs {
		if err != nil {
			problems = append(problems, RefreshProblem{Group: g, TaskID: g.Records[i].TaskID, Err: err})
		}
	}
	return problems
}
