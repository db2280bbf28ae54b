package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/redact"
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

// toServer is the secret-free description of ref that a record keeps: a URL's credential
// parameters are redacted, so a resume asks for the URL again (connectRecord).
func toServer(ref ServerRef) state.Server {
	return state.Server{
		URL:         redact.URL(ref.URL),
		Command:     ref.Argv,
		Dir:         ref.Dir,
		HeaderNames: ref.HeaderNames,
		BearerEnv:   ref.BearerEnv,
		EnvNames:    ref.EnvNames,
		OAuth:       ref.oauthRecord(),
	}
}

// fromServer turns a record's server back into a ServerRef.
func fromServer(s state.Server) ServerRef {
	return ServerRef{URL: s.URL, Argv: s.Command, Dir: s.Dir, HeaderNames: s.HeaderNames, BearerEnv: s.BearerEnv, EnvNames: s.EnvNames, OAuth: s.OAuth}
}

// newRecord builds the record of a task just created through c.
func newRecord(c *rpc.Client, ref ServerRef, tool string, t *rpc.Task, now time.Time) state.Record {
	return ledger.NewRecord(ledger.Origin{Server: toServer(ref), Era: string(c.Era()), Protocol: c.ProtocolVersion(),
		SessionID: c.SessionID(), Tool: tool}, t, now)
}

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
	r := newRecord(c, ref, tool, t, f.Now())
	f.signRecord(&r)
	return st.Put(r)
}

// warnf prints a warning line on stderr; like errorText, it passes termsafe and is bounded,
// since a warning often carries a server's words.
func (f *Factory) warnf(format string, args ...any) {
	fmt.Fprintf(f.IO.ErrOut, "mcptask: warning: %s\n", termsafe.String(termsafe.Cut(f.redactor().Text(fmt.Sprintf(format, args...)))))
}

// findTask looks id up in the ledger and picks the record the command means: the one on the
// server given by --server/--stdio when one was given on the command line, else the only one.
// It returns nil (no error) when the ledger has no usable record and a server was given.
func (f *Factory) findTask(id string) (*state.Record, error) {
	st, err := f.ledger()
	if err != nil {
		return nil, err
	}
	recs, err := st.Find(id)
	if err != nil {
		return nil, err
	}
	if f.Global.ServerSet {
		ref, _, err := f.serverRef()
		if err != nil {
			return nil, err
		}
		key := toServer(ref).Key()
		for i := range recs {
			if recs[i].Server.Key() == key {
				return &recs[i], nil
			}
		}
		return nil, nil
	}
	switch len(recs) {
	case 0:
		if f.Global.Server != "" {
			return nil, nil // $MCPTASK_SERVER
		}
		return nil, flagErrorf("task %s is not in the ledger (%s) and no server was given: add --server URL or --stdio 'command args'", id, st.Path())
	case 1:
		return &recs[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task id %s is in the ledger for %d servers; choose one with --server or --stdio:", id, len(recs))
	for _, r := range recs {
		fmt.Fprintf(&b, "\n  %s", r.Server.Display())
	}
	return nil, &FlagError{Err: errors.New(b.String())}
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

// connectRecord reaches the server of rec again. Secrets are read again, never stored: the
// bearer token from the environment variable the record names, header values from --header.
func (f *Factory) connectRecord(ctx context.Context, rec *state.Record, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	ref := fromServer(rec.Server)
	if err := f.checkRecord(*rec); err != nil {
		return nil, ref, err
	}
	hdr, err := f.recordHeaders(rec)
	if err != nil {
		return nil, ref, err
	}
	if ref.URL, err = f.recordURL(rec); err != nil {
		return nil, ref, err
	}
	f.learnSecrets(ref, hdr)
	if ref.URL == "" {
		// A stdio server is a new process: it needs its handshake again. Its tasks survive
		// only if the server keeps them (C26-STDIO).
		if opts.Protocol == "" {
			opts.Protocol = rec.Era
		}
		return f.connectRef(ctx, ref, hdr, opts)
	}
	if rec.Era == string(rpc.EraLegacy) && rec.SessionID == "" {
		// No session to reuse: a 2025-11-25 server expects its handshake.
		opts.Protocol = rec.Era
		return f.connectRef(ctx, ref, hdr, opts)
	}
	return f.connectAssumed(ctx, ref, hdr, rpc.Era(rec.Era), rec.SessionID, opts)
}

// recordURL is the URL that reaches the server of rec again. The ledger keeps a URL with its
// credential parameters redacted (token=[redacted]); such a record is reached through the
// URL given with --server (or $MCPTASK_SERVER), when it redacts to the same text, and the
// user is told to give it otherwise. The record stays in the ledger either way.
func (f *Factory) recordURL(rec *state.Record) (string, error) {
	u := rec.Server.URL
	if u == "" || !redact.Hidden(u) {
		return u, nil
	}
	if g := f.Global.Server; g != "" && redact.URL(g) == u {
		return g, nil
	}
	return "", flagErrorf("task %s was created on %s, whose credential the ledger does not keep; give the full URL again with --server (or MCPTASK_SERVER)", rec.TaskID, u)
}

// recordHeaders rebuilds the secret headers of a record from the current flags and
// environment, naming what is missing.
func (f *Factory) recordHeaders(rec *state.Record) (http.Header, error) {
	hdr := http.Header{}
	given := http.Header{}
	for _, h := range f.Global.Headers {
		name, value, ok := strings.Cut(h, ":")
		if ok {
			given.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	for _, name := range rec.Server.HeaderNames {
		v := given.Values(name)
		if len(v) == 0 {
			return nil, flagErrorf("task %s was created with --header %q; give it again (mcptask never stores header values)", rec.TaskID, name+": …")
		}
		hdr[http.CanonicalHeaderKey(name)] = v
	}
	if rec.Server.BearerEnv != "" {
		tok := f.Getenv(rec.Server.BearerEnv)
		if tok == "" {
			return nil, flagErrorf("task %s was created with --bearer-env %s, which is now empty or unset; export it again", rec.TaskID, rec.Server.BearerEnv)
		}
		hdr.Set("Authorization", "Bearer "+tok)
	}
	return hdr, nil
}

// connectAssumed opens an HTTP client in a known era without a handshake.
func (f *Factory) connectAssumed(ctx context.Context, ref ServerRef, hdr http.Header, era rpc.Era, session string, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	trace, err := f.traceOptions(ref, &opts)
	if err != nil {
		return nil, ref, err
	}
	ht, err := rpc.NewHTTPTransport(ref.URL, f.httpOptions(&ref, hdr, trace))
	if err != nil {
		return nil, ref, err
	}
	opts.Info = rpc.Implementation{Name: "mcptask", Version: Version}
	c := rpc.NewClient(ht, opts)
	c.Assume(era, session)
	if session != "" {
		// The session belongs to a task; only a finished task releases it (dropRecord).
		c.KeepSession(true)
	}
	return c, ref, nil
}
