package follow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// MaxListPages bounds the pages of one tasks/list.
const MaxListPages = 1000

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
// tasks/list (at most MaxListPages). A 2026-07-28 server is ErrNoTasksList.
func ListTasks(ctx context.Context, c *rpc.Client, guard Guard) ([]*rpc.Task, error) {
	if c.Era() == rpc.EraModern {
		return nil, ErrNoTasksList
	}
	var all []*rpc.Task
	cursor := ""
	for page := 0; page < MaxListPages; page++ {
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
		all = append(all, ts...)
		if next == "" {
			break
		}
		cursor = next
	}
	return all, nil
}
