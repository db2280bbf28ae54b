package cmd

import (
	"context"
	"io"
	"net/http"
	"os"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/globalflags"
	"github.com/mcptask/mcptask/internal/rpc"
)

// GlobalOptions are the flags every command takes (internal/globalflags).
type GlobalOptions = globalflags.Options

// ServerRef says how a server was reached, without any secret (internal/connect).
type ServerRef = connect.Ref

// connector is this run's internal/connect.Connector, made on first use: it owns the HTTP
// pools, OAuth sessions, trace and record sinks and the ledger keyring of every connection
// of the run. It reads the flags each time it needs them (connectOptions), since a command may
// settle one late (a named server, `auth login --scopes`, the demo's own URL).
func (f *Factory) connector() *connect.Connector {
	f.connOnce.Do(func() {
		f.conn = connect.New(connect.Env{
			Getenv:   f.Getenv,
			Now:      f.Now,
			Stderr:   func() io.Writer { return f.IO.ErrOut },
			Warn:     func(msg string) { f.warnf("%s", msg) },
			Redactor: f.redactor(),
			Info:     rpc.Implementation{Name: "mcptask", Version: Version},
		}, f.connectOptions)
	})
	return f.conn
}

// connectOptions are the connection flags as they stand now.
func (f *Factory) connectOptions() connect.Options {
	return f.Global.Connect(f.IO.CanLogin(f.Getenv) || f.authBrowser && f.Getenv("CI") == "", f.IO.ErrOut)
}

// serverRef validates the connection flags and describes the server, without connecting.
// Usage problems come back as FlagErrors so that nothing is sent.
func (f *Factory) serverRef() (ServerRef, http.Header, error) { return f.serverRefTo("") }

// serverRefTo is serverRef, or the server at url when one is given: the demo's own server,
// which the demo hands its call without touching the global options.
func (f *Factory) serverRefTo(url string) (ServerRef, http.Header, error) {
	wd, _ := os.Getwd()
	target := f.Global.Target(wd)
	if url != "" {
		target = connect.Target{Server: url}
	}
	ref, hdr, err := connect.NewRef(target, f.Getenv)
	if err == nil {
		err = f.connectOptions().Check(f.Getenv)
	}
	if err != nil {
		return ref, nil, connErr(err)
	}
	f.connector().LearnSecrets(ref, hdr)
	return ref, hdr, nil
}

// connect validates the flags, opens the transport and performs the era's opening.
func (f *Factory) connect(ctx context.Context, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	ref, hdr, err := f.serverRef()
	if err != nil {
		return nil, ref, err
	}
	return f.connectRef(ctx, ref, hdr, opts)
}

// connectRef opens a transport to ref. hdr holds the secret header values.
func (f *Factory) connectRef(ctx context.Context, ref ServerRef, hdr http.Header, opts rpc.ClientOptions) (*rpc.Client, ServerRef, error) {
	c, ref, err := f.connector().Dial(ctx, ref, hdr, opts)
	return c, ref, connErr(err)
}
