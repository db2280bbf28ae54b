package cmd

import (
	"context"
	"fmt"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// The ledger ties the command layer to internal/state: which record a task id means, how to
// reach its server again, and keeping the record in step with what the server says. The rule
// that matters most (PROTOCOL.md §5 rule 26, §2.7: 2026-07-28 has no tasks/list) is that a task
// id is written down before anything is printed about it.

// ledger opens the state file named by --state, $MCPTASK_STATE or the XDG default.
func (f *Factory) ledger() (*state.Store, error) {
	p, err := state.ResolvePath(f.Global.StatePath, f.Getenv)
	if err != nil {
		return nil, fmt.Errorf("locate the task ledger: %w (set --state PATH or MCPTASK_STATE)", err)
	}
	return state.Open(p).Redacting(f.redactor()), nil
}

// writableLedger checks that the ledger can keep a task id before a command asks a server
// for a task: a ledger that cannot be written (a read-only directory, a path through a file)
// is an error, exit 1, and nothing is sent.
func (f *Factory) writableLedger() error {
	st, err := f.ledger()
	if err != nil {
		return err
	}
	if err := st.Writable(); err != nil {
		return fmt.Errorf("the task ledger %s cannot be written (%w); nothing was sent: point --state PATH or MCPTASK_STATE at a file in a directory you can write", st.Path(), err)
	}
	return nil
}

// loadLedger opens the ledger and reads it whole.
func (f *Factory) loadLedger() (*state.Store, *state.File, error) {
	st, err := f.ledger()
	if err != nil {
		return nil, nil, err
	}
	file, err := st.Load()
	return st, file, err
}

// toServer is the secret-free description of ref that a record keeps: a URL's credential
// parameters are redacted, so a resume asks for the URL again (connectRecord).
func toServer(ref ServerRef) state.Server { return ref.Server() }

// fromServer turns a record's server back into a ServerRef.
func fromServer(s state.Server) ServerRef { return connect.FromServer(s) }

// recordTask writes a new task to the ledger before anything is printed, and keeps a
// 2025-11-25 HTTP session open for it (several servers bind tasks to their session).
func recordTask(ctx context.Context, f *Factory, c *rpc.Client, ref ServerRef, tool string, t *rpc.Task) error {
	if !t.Status.Terminal() {
		c.KeepSession(true)
	}
	st, err := f.ledger()
	if err != nil {
		return err
	}
	r := ledger.NewRecord(ledger.Origin{Server: toServer(ref), Era: string(c.Era()), Protocol: c.ProtocolVersion(),
		SessionID: c.SessionID(), Tool: tool}, t, f.Now())
	f.connector().Sign(&r)
	return st.Put(r)
}

// warnf prints a warning line on stderr; like errorText, it passes termsafe and is bounded,
// since a warning often carries a server's words.
func (f *Factory) warnf(format string, args ...any) {
	fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: %s\n", termsafe.String(termsafe.Cut(f.redactor().Text(fmt.Sprintf(format, args...)))))
}

// namedServerKey is the ledger key of the server the command line names (--server, --stdio),
// or "" when none was named: the filter of commands that pick records (findTask, forget, adopt).
func (f *Factory) namedServerKey() (string, error) {
	if !f.Global.ServerSet {
		return "", nil
	}
	ref, _, err := f.serverRef()
	if err != nil {
		return "", err
	}
	return toServer(ref).Key(), nil
}

// findTask looks id up in the ledger and picks the record the command means: the one on the
// server given by --server/--stdio when one was given on the command line, else the only one.
// It returns nil (no error) when the ledger has no usable record and a server was given.
func (f *Factory) findTask(id string) (*state.Record, error) {
	st, err := f.ledger()
	if err != nil {
		return nil, err
	}
	return ledger.Find(st, id, f.namedServerKey, f.Global.Server != "") // $MCPTASK_SERVER gives one
}

// wholeID is the task id a command works on once findTask found rec for the id typed: the
// record's whole id when the one typed was a prefix of it, else the id as typed.
func wholeID(typed string, rec *state.Record) string {
	if rec != nil {
		return rec.TaskID
	}
	return typed
}

// connectTask connects to the server of task id: the ledger's record when there is one (its
// era assumed and its 2025-11-25 session reused, so a session-bound task is found again),
// else the server the flags name.
func (f *Factory) connectTask(ctx context.Context, id string, opts rpc.ClientOptions) (*rpc.Client, ServerRef, *state.Record, error) {
	rec, err := f.findTask(id)
	if err != nil {
		return nil, ServerRef{}, nil, err
	}
	c, ref, err := f.connectFound(ctx, rec, opts)
	return c, ref, rec, err
}

// connectFound connects to the server of rec, a record findTask returned, or to the server the
// flags name when it returned none.
func (f *Factory) connectFound(ctx context.Context, rec *state.Record, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	if rec == nil {
		return f.connect(ctx, opts)
	}
	return f.connectRecord(ctx, rec, opts)
}

// refOf describes the server connectFound would reach, without connecting.
func (f *Factory) refOf(rec *state.Record) (ServerRef, error) {
	if rec != nil {
		return fromServer(rec.Server), nil
	}
	ref, _, err := f.serverRef()
	return ref, err
}

// connectRecord reaches the server of rec again, once the record passes the ledger's MAC
// check; secrets are read again, never stored (connect.Connector.Record).
func (f *Factory) connectRecord(ctx context.Context, rec *state.Record, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	if rec.Local {
		// No server knows a local id: asking one would only get "unknown task".
		return nil, ServerRef{}, flagErrorf("%s is no server task: the server answered at once, with a result mcptask kept; 'mcptask result %s' prints it, 'mcptask forget %s' drops it; nothing was sent", rec.TaskID, rec.TaskID, rec.TaskID)
	}
	c, ref, err := f.connector().Record(ctx, rec, opts)
	return c, ref, connErr(err)
}
