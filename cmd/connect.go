package cmd

import (
	"context"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/pflag"
)

// GlobalOptions are the flags every command takes: how to reach the server and how to talk.
type GlobalOptions struct {
	Server    string
	Stdio     string
	Headers   []string
	BearerEnv string
	Protocol  string
	Trace     bool
	Insecure  bool
	JSON      bool
	StatePath string
	// Keep keeps finished tasks in the ledger as history (--keep).
	Keep bool
	// NoPush turns push updates off (--no-push): polling only.
	NoPush bool
	// MaxConns bounds the connections to one server, shared by every task on it (--max-conns).
	MaxConns int
	// Record is the --record file: an NDJSON transcript of the wire, linted live.
	Record string
	// Config is an extra config file of named servers (--config, $MCPTASK_CONFIG).
	Config string
	// StdioEnv holds KEY=VALUE pairs for a stdio server named in a config file.
	StdioEnv []string
	// JSONL (--jsonl on call, watch, resume) streams one JSON event per line on stdout; it
	// implies JSON for everything else.
	JSONL bool
	// ServerSet records that --server or --stdio was given on the command line (not only
	// through $MCPTASK_SERVER): it then wins over the ledger's record of a task.
	ServerSet bool
	// Auth holds the OAuth flags (see cmd/auth.go).
	Auth AuthOptions
	// CI is the CI system whose job log mcptask writes for (--ci): auto, github, gitlab, none.
	CI string
	// ConnectTimeout bounds a server's first answer (--connect-timeout; see deadline.go).
	ConnectTimeout time.Duration
}

// AddFlags registers the global flags. Environment variables give defaults; a flag given on
// the command line wins.
func (g *GlobalOptions) AddFlags(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&g.Server, "server", getenv("MCPTASK_SERVER"), "Streamable HTTP endpoint `URL` of the MCP server ($MCPTASK_SERVER)")
	fs.StringVar(&g.Stdio, "stdio", "", "start the MCP server as a child process: `'command args'`, spoken to over stdio")
	fs.StringArrayVar(&g.Headers, "header", nil, "extra HTTP header `'Name: value'` (repeatable; values are never printed or stored)")
	fs.StringVar(&g.BearerEnv, "bearer-env", "", "send 'Authorization: Bearer <token>' with the token read from environment variable `VAR`")
	protocol := getenv("MCPTASK_PROTOCOL")
	if protocol == "" {
		protocol = "auto"
	}
	fs.StringVar(&g.Protocol, "protocol", protocol, "protocol version: auto, 2026-07-28 or 2025-11-25")
	fs.BoolVar(&g.Trace, "trace", false, "log every HTTP exchange and JSON-RPC frame to stderr (secrets redacted)")
	fs.BoolVar(&g.Insecure, "insecure", false, "skip TLS certificate verification")
	fs.BoolVar(&g.JSON, "json", false, "print machine-readable JSON on stdout; errors as a JSON line on stderr")
	fs.StringVar(&g.StatePath, "state", "", "task ledger file `PATH` ($MCPTASK_STATE; default $XDG_STATE_HOME/mcptask/tasks.json)")
	fs.BoolVar(&g.NoPush, "no-push", false, "do not use push updates (subscriptions/listen, notifications/tasks/status); poll only")
	fs.IntVar(&g.MaxConns, "max-conns", rpc.DefaultMaxConnsPerHost, "at most `N` connections to one server, shared by all its tasks")
	fs.StringVar(&g.Record, "record", "", "write every HTTP exchange, stdio frame and SSE event as NDJSON to `FILE` (secrets redacted), and flag rules the server breaks")
	fs.StringVar(&g.Config, "config", "", "extra config `FILE` of named servers (mcpServers, as in .mcp.json); see 'mcptask servers'")
	fs.BoolVar(&g.Keep, "keep", false, "keep finished tasks in the ledger as history (see 'mcptask list --all')")
	fs.StringVar(&g.CI, "ci", "auto", "CI system to write the job log for: `auto|github|gitlab|none` (auto: GITHUB_ACTIONS=true or GITLAB_CI=true)")
	fs.DurationVar(&g.ConnectTimeout, "connect-timeout", connect.DefaultConnectTimeout, "give up on a server that has not answered connecting, its handshake or a one-shot request after `D` (exit 1; 0 waits as long as it takes; $MCPTASK_CONNECT_TIMEOUT)")
	g.Auth.addFlags(fs)
}

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
	g := f.Global
	a := g.Auth
	o := connect.Options{
		Protocol: g.Protocol, Insecure: g.Insecure, MaxConns: g.MaxConns,
		Record: g.Record, StatePath: g.StatePath, ConnectTimeout: g.ConnectTimeout,
		StdioEnv: g.StdioEnv, Server: g.Server, Headers: g.Headers,
		Auth: a.AuthOptions,
	}
	o.Auth.Interactive = f.IO.CanLogin(f.Getenv) || f.authBrowser && f.Getenv("CI") == ""
	if g.Trace {
		o.Trace = f.IO.ErrOut
	}
	return o
}

// serverRef validates the connection flags and describes the server, without connecting.
// Usage problems come back as FlagErrors so that nothing is sent.
func (f *Factory) serverRef() (ServerRef, http.Header, error) {
	g := f.Global
	t := connect.Target{Server: g.Server, Stdio: g.Stdio, Headers: g.Headers, BearerEnv: g.BearerEnv, StdioEnv: g.StdioEnv}
	if g.Stdio != "" {
		t.Dir, _ = os.Getwd()
	}
	ref, hdr, err := connect.NewRef(t, f.Getenv)
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
