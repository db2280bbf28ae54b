package connect

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// A ledger record may start a command, export environment variables or send a secret from
// the environment when its server is reached again; it may do so only if this user's mcptask
// wrote it (state/sign.go). Records are signed when they are created (Sign), checked
// whenever one is connected to again (Record), and a record that fails the check is adopted
// explicitly (`mcptask adopt`).

// Keyring returns this run's ledger keyring: the key file in the user's state directory, and
// $MCPTASK_LEDGER_KEY when set.
func (c *Connector) Keyring() (*state.Keyring, error) {
	c.keysOnce.Do(func() {
		dir, err := state.Dir(c.env.Getenv)
		if err != nil {
			c.keysErr = err
			return
		}
		c.keys, c.keysErr = state.NewKeyring(dir, c.env.Getenv(state.KeyEnv))
	})
	return c.keys, c.keysErr
}

// Sign signs a record this run creates, when it needs it: a record of an HTTP server without
// credentials resumes without a signature, and needs no key file. A key that cannot be had
// leaves the record unsigned, with a warning: the task id must reach the ledger whatever
// happens.
func (c *Connector) Sign(r *state.Record) {
	if len(r.Server.Grants()) == 0 {
		return
	}
	k, err := c.Keyring()
	if err == nil {
		err = k.Sign(r)
	}
	if err != nil {
		c.warnf("task %s is recorded unsigned (%v); resuming it will need: mcptask adopt %s", r.TaskID, err, r.TaskID)
	}
}

// UntrustedRecordError says that a record may not be resumed as it stands (exit 2).
type UntrustedRecordError struct {
	Rec    state.Record
	Reason error
}

func (e *UntrustedRecordError) Error() string {
	id := termsafe.Line(e.Rec.TaskID)
	return fmt.Sprintf("task %s: its record was not written by this user's mcptask (%v), and resuming it would %s; nothing was started or sent; if you trust it: mcptask adopt %s",
		id, e.Reason, termsafe.Line(strings.Join(e.Rec.Server.Grants(), ", ")), id)
}

// Check returns nil when rec may be resumed: it grants its server nothing (a bare URL), or
// this user's mcptask signed it. Otherwise an UntrustedRecordError says why.
func (c *Connector) Check(rec state.Record) error {
	if len(rec.Server.Grants()) == 0 {
		return nil
	}
	k, err := c.Keyring()
	if err == nil {
		err = k.Check(rec)
	}
	if err == nil {
		return nil
	}
	return &UntrustedRecordError{Rec: rec, Reason: err}
}

// Record reaches the server of rec again: its era assumed and its 2025-11-25 session reused,
// so that a session-bound task is found again. The record must pass Check first: an
// unsigned record that would start a command or send a secret starts and sends nothing.
// Secrets are read again, never stored: the bearer token from the environment variable the
// record names, header values from Options.Headers.
func (c *Connector) Record(ctx context.Context, rec *state.Record, opts rpc.ClientOptions) (*rpc.Client, Ref, error) {
	ref := FromServer(rec.Server)
	if err := c.Check(*rec); err != nil {
		return nil, ref, err
	}
	// A record that passes unsigned was perhaps planted: it gets no login, no client
	// credentials grant and none of the run's client settings, only a credential already
	// stored for its URL.
	ref.StoredLoginOnly = len(rec.Server.Grants()) == 0
	hdr, err := c.recordHeaders(rec)
	if err != nil {
		return nil, ref, err
	}
	if ref.URL, err = c.recordURL(rec); err != nil {
		return nil, ref, err
	}
	c.LearnSecrets(ref, hdr)
	if ref.URL == "" {
		// A stdio server is a new process: it needs its handshake again. Its tasks survive
		// only if the server keeps them (C26-STDIO).
		if opts.Protocol == "" {
			opts.Protocol = rec.Era
		}
		return c.Dial(ctx, ref, hdr, opts)
	}
	if rec.Era == string(rpc.EraLegacy) && rec.SessionID == "" {
		// No session to reuse: a 2025-11-25 server expects its handshake.
		opts.Protocol = rec.Era
		return c.Dial(ctx, ref, hdr, opts)
	}
	return c.Assume(ctx, ref, hdr, rpc.Era(rec.Era), rec.SessionID, opts)
}

// recordURL is the URL that reaches the server of rec again. The ledger keeps a URL with its
// credential parameters redacted (token=[redacted]); such a record is reached through the
// URL given with --server (or $MCPTASK_SERVER), when it redacts to the same text, and the
// user is told to give it otherwise. The record stays in the ledger either way.
func (c *Connector) recordURL(rec *state.Record) (string, error) {
	u := rec.Server.URL
	if u == "" || !redact.Hidden(u) {
		return u, nil
	}
	if g := c.opts().Server; g != "" && redact.URL(g) == u {
		return g, nil
	}
	return "", exitcode.Usagef("task %s was created on %s, whose credential the ledger does not keep; give the full URL again with --server (or MCPTASK_SERVER)", rec.TaskID, u)
}

// recordHeaders rebuilds the secret headers of a record from the current flags and
// environment, naming what is missing.
func (c *Connector) recordHeaders(rec *state.Record) (http.Header, error) {
	hdr := http.Header{}
	given := http.Header{}
	for _, h := range c.opts().Headers {
		name, value, ok := strings.Cut(h, ":")
		if ok {
			given.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	for _, name := range rec.Server.HeaderNames {
		v := given.Values(name)
		if len(v) == 0 {
			return nil, exitcode.Usagef("task %s was created with --header %q; give it again (mcptask never stores header values)", rec.TaskID, name+": …")
		}
		hdr[http.CanonicalHeaderKey(name)] = v
	}
	if rec.Server.BearerEnv != "" {
		tok := c.env.Getenv(rec.Server.BearerEnv)
		if tok == "" {
			return nil, exitcode.Usagef("task %s was created with --bearer-env %s, which is now empty or unset; export it again", rec.TaskID, rec.Server.BearerEnv)
		}
		hdr.Set("Authorization", "Bearer "+tok)
	}
	return hdr, nil
}
