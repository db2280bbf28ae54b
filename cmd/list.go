package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// ListOptions are the inputs of `mcptask list`.
type ListOptions struct {
	f       *Factory
	All     bool
	Remote  bool
	Refresh bool
	Timeout time.Duration
}

// NewCmdList returns `mcptask list`.
func NewCmdList(f *Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{f: f}
	c := &cobra.Command{
		Use:   "list",
		Short: "List the tasks in the local ledger",
		Long: `List the tasks mcptask has recorded in its ledger: every task a server handed
back, saved before anything was printed, so that no task id is ever lost.

Each status is the last one mcptask saw, with when it saw it ("working · 2m ago"):
list reads the ledger and sends nothing. --refresh first asks each task's server
(one tasks/get per unfinished task shown, a few at a time, within --timeout) and
writes what it says to the ledger; a server that cannot be reached keeps its tasks
as last seen, with a warning.

By default only unfinished tasks are shown; --all adds finished and expired ones
(finished tasks stay in the ledger only with --keep, or until 'mcptask prune' for
tasks a host created through 'mcptask proxy'). Those tasks are marked in a VIA
column ("proxy"; "via" in --json). With --remote, a 2025-11-25
server that declares tasks.list is asked for its own list, shown beside the ledger
(2026-07-28 has no tasks/list: the ledger is the only list there is).`,
		Example: `  mcptask list
  mcptask list --refresh
  mcptask list --all --json | jq -r '.records[].taskId'
  mcptask list --remote --server http://127.0.0.1:8080/mcp`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return runList(c.Context(), opts)
		},
	}
	c.Flags().BoolVarP(&opts.All, "all", "a", false, "include finished and expired tasks")
	c.Flags().BoolVar(&opts.Refresh, "refresh", false, "ask the servers for the status of the unfinished tasks shown first (tasks/get)")
	c.Flags().BoolVar(&opts.Remote, "remote", false, "also show the server's own tasks/list (2025-11-25 servers that declare tasks.list)")
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "bound --refresh (default 10s; rows not refreshed by then read as last seen) and --remote (none by default; exit 124)")
	return c
}

func runList(ctx context.Context, opts *ListOptions) error {
	f := opts.f
	st, file, err := f.loadLedger()
	if err != nil {
		return err
	}
	now := f.Now()
	l := output.Listing{Ledger: file.Tasks, WithRemote: opts.Remote, Style: f.statusStyle()}
	for _, r := range file.Tasks {
		if opts.All || r.Unfinished(now) {
			l.Records = append(l.Records, r)
		}
	}
	var ended []state.Record
	if opts.Refresh {
		before := l.Records
		if l.Records, l.Warnings, err = refreshList(ctx, f, l.Records, cmp.Or(opts.Timeout, defaultRefreshTimeout)); err != nil {
			return err
		}
		for i, r := range l.Records {
			if before[i].Unfinished(now) && r.Terminal() {
				ended = append(ended, r)
			}
		}
	}
	if opts.Remote && !f.printer().JSON() {
		return streamList(ctx, f, opts, l, file.Tasks, ended, now)
	}
	if opts.Remote {
		// --json holds the document, bounded by follow.ListPages's caps (10,000 tasks, 32 MiB):
		// the envelope is one object whose "warnings" come before "remote", so a document
		// written as the pages arrive could not say in it why the list was cut.
		var ref ServerRef
		// --timeout bounds the whole conversation with the server: connecting and every page.
		rctx, cancel := withDeadline(ctx, f.deadline(opts.Timeout))
		defer cancel()
		var cut *follow.ListCut
		ref, err = listRemote(rctx, f, file.Tasks, now, func(_ ServerRef, ts []*rpc.Task) error {
			l.Remote = append(l.Remote, ts...)
			return nil
		})
		if errors.As(err, &cut) {
			f.warnf("%v; the tasks fetched until then are shown", cut)
			err = nil
		}
		if err != nil {
			return err
		}
		l.Server = ref.String()
	}
	if len(l.Records) == 0 && !opts.Remote && !f.Global.JSON {
		what := "no unfinished tasks"
		if opts.All {
			what = "no tasks"
		}
		fmt.Fprintf(f.IO.ErrOut, "%s in the ledger (%s)\n", what, st.Path())
		return nil
	}
	return f.printer().Print(l.Doc(), func(w io.Writer) error {
		for _, msg := range l.Warnings {
			f.warnf("%s", msg)
		}
		if err := l.Text(w, now); err != nil {
			return err
		}
		listNotes(f, opts, l, ended, now)
		return nil
	})
}

// listNotes tells a person, after the table, which tasks ended since last seen and that
// the statuses are as last seen.
func listNotes(f *Factory, opts *ListOptions, l output.Listing, ended []state.Record, now time.Time) {
	for _, r := range ended {
		fmt.Fprintf(f.IO.ErrOut, "task %s ended %s since it was last seen: 'mcptask result %s' shows its outcome\n",
			termsafe.Line(r.TaskID), termsafe.Line(r.Status), termsafe.Line(r.TaskID))
	}
	if !opts.Refresh && f.IO.IsStderrTTY() && slices.ContainsFunc(l.Records, func(r state.Record) bool { return r.Unfinished(now) }) {
		fmt.Fprintln(f.IO.ErrOut, "statuses as last seen; 'mcptask list --refresh' asks the servers")
	}
}

// streamList is the text of list --remote: the ledger's rows first, then the server's rows
// page by page as they arrive (output.RemoteTable), so that memory does not grow with the
// server's list and a person sees rows before it ends. A list cut short keeps the rows shown
// and says why (exit 0); --timeout exits 124 after them.
func streamList(ctx context.Context, f *Factory, opts *ListOptions, l output.Listing, known, ended []state.Record, now time.Time) error {
	for _, msg := range l.Warnings {
		f.warnf("%s", msg)
	}
	out := f.IO.Out
	if err := l.LedgerText(out, now); err != nil {
		return err
	}
	// --timeout bounds the whole conversation with the server: connecting and every page.
	rctx, cancel := withDeadline(ctx, f.deadline(opts.Timeout))
	defer cancel()
	var table *output.RemoteTable
	_, err := listRemote(rctx, f, known, now, func(ref ServerRef, ts []*rpc.Task) error {
		if table == nil {
			l.Server = ref.String()
			table = l.RemoteTable(out, now)
		}
		return table.Page(ts)
	})
	var cut *follow.ListCut
	if errors.As(err, &cut) {
		f.warnf("%v; the tasks fetched until then are shown", cut)
		err = nil
	}
	if err != nil {
		return err
	}
	listNotes(f, opts, l, ended, now)
	return nil
}

// defaultRefreshTimeout bounds list --refresh when --timeout is not given.
const defaultRefreshTimeout = 10 * time.Second

// refreshList asks the servers of recs for the status of their unfinished tasks (one
// tasks/get each, follow.Refresh), within timeout, writes what they say to the ledger, and
// returns recs as the ledger now has them, with a warning per server or task not refreshed.
func refreshList(ctx context.Context, f *Factory, recs []state.Record, timeout time.Duration) ([]state.Record, []string, error) {
	now := f.Now()
	var gs follow.Groups
	for _, r := range recs {
		if !r.Unfinished(now) {
			continue // nothing changes once a task ended
		}
		gs.Add(r, f.connector().Check(r) != nil, func() *follow.Group {
			ref := fromServer(r.Server)
			return &follow.Group{Name: ref.String(), Key: r.Server.Key(), Connect: func(ctx context.Context, o rpc.ClientOptions) (*rpc.Client, error) {
				c, _, err := f.connectRecord(ctx, &r, o)
				return c, err
			}}
		})
	}
	if len(gs.List) == 0 {
		return recs, nil, nil
	}
	rctx, cancel := withDeadline(ctx, f.deadline(timeout))
	defer cancel()
	led := f.newLedger()
	problems := follow.Refresh(rctx, follow.RefreshRequest{Groups: gs.List, Ledger: led, Guard: func(g *follow.Group) follow.Guard {
		return f.guard(fromServer(g.Records[0].Server))
	}})
	led.Close()
	var warnings []string
	for _, p := range problems {
		what := fmt.Sprintf("%d task(s)", len(p.Group.Records))
		if p.TaskID != "" {
			what = "task " + p.TaskID
		}
		warnings = append(warnings, fmt.Sprintf("could not refresh %s on %s, shown as last seen: %s", what, p.Group.Name, f.errorText(p.Err)))
	}
	st, file, err := f.loadLedger()
	if err != nil {
		return nil, nil, err
	}
	_ = st
	out := make([]state.Record, 0, len(recs))
	for _, r := range recs {
		i := slices.IndexFunc(file.Tasks, func(n state.Record) bool { return n.TaskID == r.TaskID && n.Server.Key() == r.Server.Key() })
		if i >= 0 {
			r = file.Tasks[i]
		}
		out = append(out, r)
	}
	return out, warnings, nil
}

// listRemote reads the server's own tasks/list (--remote), in the session of one of its
// unfinished ledger tasks when there is one, handing each page to page as it arrives
// (follow.ListPages), with the server as connected.
func listRemote(ctx context.Context, f *Factory, recs []state.Record, now time.Time, page func(ServerRef, []*rpc.Task) error) (ServerRef, error) {
	ref, hdr, err := f.serverRef()
	if err != nil {
		return ref, err
	}
	var c *rpc.Client
	if sid := follow.ListSession(recs, toServer(ref).Key(), now); sid != "" && f.Global.Protocol != rpc.VersionModern && ref.URL != "" {
		c, ref, err = f.connector().Assume(ctx, ref, hdr, rpc.EraLegacy, sid, rpc.ClientOptions{})
		err = connErr(err)
	} else {
		c, ref, err = f.connect(ctx, rpc.ClientOptions{})
	}
	if err != nil {
		return ref, err
	}
	defer c.Close()
	err = follow.ListPages(ctx, c, f.guard(ref), func(ts []*rpc.Task) error { return page(ref, ts) })
	if errors.Is(err, follow.ErrNoTasksList) {
		return ref, fmt.Errorf("--remote: %s speaks MCP 2026-07-28, which has no tasks/list; the ledger is the only list", ref)
	}
	return ref, err
}

// NewCmdForget returns `mcptask forget`.
func NewCmdForget(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "forget <task-id>...",
		Short: "Remove tasks from the local ledger (the server is not told)",
		Long: `Remove tasks from the ledger. The tasks keep running on their servers: use
'mcptask cancel' to stop one. A task id recorded for several servers is removed for
all of them unless --server or --stdio names one.`,
		Example:           `  mcptask forget 786512e2-9e0d-44bd-8f29-789f320fe840`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              func(c *cobra.Command, args []string) error { return runForget(f, args) },
	}
}

// runForget removes the tasks named by ids from the ledger (for the server the flags name,
// if any). An id not there exits 6, after the others were removed.
func runForget(f *Factory, ids []string) error {
	st, err := f.ledger()
	if err != nil {
		return err
	}
	key, err := f.namedServerKey()
	if err != nil {
		return err
	}
	forgot, missing, err := ledger.Forget(st, ids, key)
	if err != nil {
		return err
	}
	if err := f.printer().Print(output.Forget{Type: "forget", Forgotten: forgot, Missing: missing}, nil); err != nil {
		return err
	}
	if len(missing) > 0 {
		return &ExitError{Code: ExitExpired, Err: fmt.Errorf("not in the ledger (%s): %s", st.Path(), strings.Join(missing, ", "))}
	}
	fmt.Fprintf(f.IO.ErrOut, "forgot %d task(s)\n", len(ids)-len(missing))
	return nil
}

// NewCmdPrune returns `mcptask prune`.
func NewCmdPrune(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "prune",
		Short: "Drop finished and expired tasks from the local ledger",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			st, err := f.ledger()
			if err != nil {
				return err
			}
			removed, err := st.Prune(f.Now())
			if err != nil {
				return err
			}
			return f.printer().Print(output.NewPrune(removed), func(io.Writer) error {
				_, err := fmt.Fprintf(f.IO.ErrOut, "removed %d finished or expired task(s) from %s\n", len(removed), st.Path())
				return err
			})
		},
	}
}
