package follow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// A server's tasks/list is bounded: at most MaxListPages pages, MaxListTasks tasks and
// MaxListBytes bytes of tasks in all, and a cursor the server handed out before ends it (a
// cursor that loops a → b → a would otherwise fetch the same pages until the page limit).
const (
	MaxListPages = 1000
	MaxListTasks = 10000
	MaxListBytes = 32 << 20
)

// ListCut says that a tasks/list was stopped before its end (ListTasks returns the tasks
// fetched until then with it): why, after how many pages.
type ListCut struct {
	Reason string
	Pages  int
	Tasks  int
}

func (e *ListCut) Error() string {
	return fmt.Sprintf("the server's tasks/list was cut after %d page(s) and %d task(s): %s", e.Pages, e.Tasks, e.Reason)
}

// ErrNoTasksList is a server that speaks 2026-07-28, which has no tasks/list.
var ErrNoTasksList = errors.New("MCP 2026-07-28 has no tasks/list")

// ListSession is the 2025-11-25 session to list the tasks of the server whose ledger key is key
// in: servers that bind tasks to sessions list only the session's own tasks, so the session of
// an unfinished ledger task on that server is reused; "" when there is none.
func ListSession(recs []state.Record, key string, now time.Time) string {
	for _, r := range recs {
		if r.Era == string(rpc.EraLegacy) && r.SessionID != "" && r.Server.Key() == key && r.Unfinished(now) {
			return r.SessionID
		}
	}
	return ""
}

// ListTasks asks a 2025-11-25 server, through c, for its own list of tasks: every page of
// tasks/list, within the bounds above. A list cut short comes back with the tasks fetched and
// a *ListCut. A 2026-07-28 server is ErrNoTasksList.
func ListTasks(ctx context.Context, c *rpc.Client, guard Guard) ([]*rpc.Task, error) {
	if c.Era() == rpc.EraModern {
		return nil, ErrNoTasksList
	}
	var all []*rpc.Task
	cursor, size := "", 0
	seen := map[string]bool{}
	for page := 1; ; page++ {
		var ts []*rpc.Task
		var next string
		var raw error
		err := guard.run(ctx, "tasks/list", func(ctx context.Context) error {
			ts, next, raw = c.ListTasks(ctx, cursor)
			return raw
		})
		if err != nil {
			if err != raw {
				return nil, err // explained by the guard
			}
			return nil, fmt.Errorf("tasks/list: %w", err)
		}
		for _, t := range ts {
			size += len(t.Raw)
			if len(all) >= MaxListTasks || size > MaxListBytes {
				return all, &ListCut{Reason: fmt.Sprintf("mcptask keeps at most %d tasks or %d MiB of them", MaxListTasks, MaxListBytes>>20), Pages: page, Tasks: len(all)}
			}
			all = append(all, t)
		}
		switch {
		case next == "":
			return all, nil
		case seen[next] || next == cursor:
			return all, &ListCut{Reason: "the server's nextCursor repeats one it gave before", Pages: page, Tasks: len(all)}
		case page >= MaxListPages:
			return all, &ListCut{Reason: fmt.Sprintf("mcptask reads at most %d pages", MaxListPages), Pages: page, Tasks: len(all)}
		}
		seen[next] = true
		cursor = next
	}
}
