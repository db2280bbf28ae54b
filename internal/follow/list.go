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

// ListCut says that a tasks/list was stopped before its end (ListPages has handed on the
// tasks fetched until then): why, after how many pages.
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

// ListPages asks a 2025-11-25 server, through c, for its own list of tasks: every page of
// tasks/list, within the bounds above, each page's tasks handed to page as the page arrives
// (the last one cut to the bounds), so that a caller can show a long list without holding
// it. A list cut short ends with a *ListCut; an error of page stops the list and is returned
// as it is. A 2026-07-28 server is ErrNoTasksList.
func ListPages(ctx context.Context, c *rpc.Client, guard Guard, page func([]*rpc.Task) error) error {
	if c.Era() == rpc.EraModern {
		return ErrNoTasksList
	}
	cursor, count, size := "", 0, 0
	seen := map[string]bool{}
	for n := 1; ; n++ {
		var ts []*rpc.Task
		var next string
		var raw error
		err := guard.run(ctx, "tasks/list", func(ctx context.Context) error {
			ts, next, raw = c.ListTasks(ctx, cursor)
			return raw
		})
		if err != nil {
			if err != raw {
				return err // explained by the guard
			}
			return fmt.Errorf("tasks/list: %w", err)
		}
		keep := 0
		for _, t := range ts {
			size += len(t.Raw)
			if count >= MaxListTasks || size > MaxListBytes {
				break
			}
			keep++
			count++
		}
		if err := page(ts[:keep]); err != nil {
			return err
		}
		switch {
		case keep < len(ts):
			return &ListCut{Reason: fmt.Sprintf("mcptask keeps at most %d tasks or %d MiB of them", MaxListTasks, MaxListBytes>>20), Pages: n, Tasks: count}
		case next == "":
			return nil
		case seen[next] || next == cursor:
			return &ListCut{Reason: "the server's nextCursor repeats one it gave before", Pages: n, Tasks: count}
		case n >= MaxListPages:
			return &ListCut{Reason: fmt.Sprintf("mcptask reads at most %d pages", MaxListPages), Pages: n, Tasks: count}
		}
		seen[next] = true
		cursor = next
	}
}
