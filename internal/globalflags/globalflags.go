// Package globalflags holds the flags every mcptask command takes (Options): their table,
// their MCPTASK_* environment defaults (precedence: flag > environment > config file), what
// --server NAME stands for in the config files, and the connection settings and target they
// make for internal/connect. It exists so that cmd keeps only the wiring of these flags to
// cobra and the commands read one typed value (issue 21).
package globalflags

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/config"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/spf13/pflag"
)

// Options are the flags every command takes: how to reach the server and how to talk.
type Options struct {
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
	// Auth holds the OAuth flags. Each has its MCPTASK_* variable (ApplyEnv); Scopes come from
	// a named server's "oauth" settings (or auth login --scopes), Interactive is decided per
	// connection (Connect).
	Auth connect.AuthOptions
	// CI is the CI system whose job log mcptask writes for (--ci): auto, github, gitlab, none.
	CI string
	// ConnectTimeout bounds a server's first answer (--connect-timeout; internal/connect, timeout.go).
	ConnectTimeout time.Duration
}

// AddFlags registers the global flags. Environment variables give defaults; a flag given on
// the command line wins.
func (g *Options) AddFlags(fs *pflag.FlagSet, getenv func(string) string) {
	fs.StringVar(&g.Server, "server", getenv("MCPTASK_SERVER"), "Streamable HTTP endpoint `URL` of the MCP server ($MCPTASK_SERVER)")
	fs.StringVar(&g.Stdio, "stdio", "", "start the MCP server `'command args'` as a child process, over stdio")
	fs.StringArrayVar(&g.Headers, "header", nil, "extra HTTP header `'Name: value'` (repeatable; never printed or stored)")
	fs.StringVar(&g.BearerEnv, "bearer-env", "", "send 'Authorization: Bearer' with the token in environment `VAR`")
	protocol := getenv("MCPTASK_PROTOCOL")
	if protocol == "" {
		protocol = "auto"
	}
	fs.StringVar(&g.Protocol, "protocol", protocol, "protocol version: auto, 2026-07-28 or 2025-11-25")
	fs.BoolVar(&g.Trace, "trace", false, "log every HTTP exchange and JSON-RPC frame to stderr (secrets redacted)")
	fs.BoolVar(&g.Insecure, "insecure", false, "skip TLS certificate verification")
	fs.BoolVar(&g.JSON, "json", false, "machine-readable JSON on stdout; errors as a JSON line on stderr")
	fs.StringVar(&g.StatePath, "state", "", "task ledger file `PATH` (default $XDG_STATE_HOME/mcptask/tasks.json)")
	fs.BoolVar(&g.NoPush, "no-push", false, "poll only, without push updates (subscriptions/listen)")
	fs.IntVar(&g.MaxConns, "max-conns", rpc.DefaultMaxConnsPerHost, "at most `N` connections to one server, shared by its tasks")
	fs.StringVar(&g.Record, "record", "", "record the wire in `FILE` as NDJSON (redacted), naming broken rules")
	fs.StringVar(&g.Config, "config", "", "extra config `FILE` of named servers (mcpServers, as in .mcp.json)")
	fs.BoolVar(&g.Keep, "keep", false, "no effect: finished tasks now stay in the ledger until 'mcptask prune'")
	fs.StringVar(&g.CI, "ci", "auto", "`CI` system of the job log: github, gitlab, none or auto")
	fs.DurationVar(&g.ConnectTimeout, "connect-timeout", connect.DefaultConnectTimeout, "give up on a server silent for `D` at connect (0: never)")
	addAuthFlags(&g.Auth, fs)
}

// addAuthFlags registers the OAuth flags.
func addAuthFlags(a *connect.AuthOptions, fs *pflag.FlagSet) {
	fs.StringVar(&a.Login, "login", auth.LoginAuto, "OAuth login on a 401: auto (inline, only at a terminal or with --browser follow) or never (stored credentials only; otherwise exit 7)")
	fs.StringVar(&a.Browser, "browser", auth.BrowserOpen, "how to visit the OAuth authorization URL: open (the system browser), print (show the URL) or follow (request it and follow its redirects, keeping its cookies for that login only, for servers that approve without a page)")
	fs.StringVar(&a.ClientID, "client-id", "", "OAuth client id registered for mcptask at the server's authorization server")
	fs.StringVar(&a.ClientSecretEnv, "client-secret-env", "", "read the OAuth client secret from environment variable `VAR`")
	fs.StringVar(&a.ClientMetadataURL, "client-metadata-url", "", "OAuth client id as a Client ID Metadata Document `URL`, used where the authorization server supports them")
	fs.IntVar(&a.CallbackPort, "callback-port", 0, "loopback `PORT` for the OAuth redirect (default: a free port on 127.0.0.1)")
	fs.StringVar(&a.Store, "auth-store", auth.StoreAuto, "where OAuth credentials live: auto (the OS keychain, else a 0600 file), keyring or file")
	fs.StringVar(&a.Profile, "profile", "", "OAuth credential profile `NAME`: several accounts on one server")
	fs.StringVar(&a.Grant, "grant", "", "OAuth grant: client-credentials for machines (with --client-id and --client-secret-env or --client-key-file)")
	fs.StringVar(&a.ClientKeyFile, "client-key-file", "", "PEM private key `FILE` for private_key_jwt client authentication (--grant client-credentials)")
	fs.StringVar(&a.Issuer, "issuer", "", "issuer `URL` of the authorization server --client-id is registered at; its secret or key is sent only there, and a server naming another is refused (exit 7)")
}

// ApplyEnv gives every flag of fs not set on the command line its MCPTASK_* variable
// (precedence: flag > environment > config file). A value that does not parse is a usage
// error.
func ApplyEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if err != nil || fl.Changed || fl.Name == "help" || fl.Name == "version" {
			return
		}
		env := "MCPTASK_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		v := getenv(env)
		if v == "" || fl.DefValue == v {
			return
		}
		if serr := fl.Value.Set(v); serr != nil {
			err = &exitcode.UsageError{Err: fmt.Errorf("$%s: %v", env, serr)}
		}
	})
	return err
}

// Named reports whether --server names a server of a config file rather than a URL.
func (g *Options) Named() bool { return g.Server != "" && !strings.Contains(g.Server, "://") }

// UseNamed turns --server NAME into the flags it stands for in set: the URL and headers, or
// the stdio command and its environment, and the entry's OAuth settings under the flags given.
// warn hears of a project entry that the user's own config shadows. A name set does not know
// is a usage error; set's own errors (an untrusted entry, a bad ${VAR}) come back as they are.
func (g *Options) UseNamed(set *config.Set, getenv func(string) string, warn func(string)) error {
	name := g.Server
	a := &g.Auth
	o := config.OAuthSettings{ClientID: a.ClientID, ClientSecretEnv: a.ClientSecretEnv, ClientMetadataURL: a.ClientMetadataURL, Issuer: a.Issuer, CallbackPort: a.CallbackPort, Scopes: a.Scopes}
	s, ignored, r, err := set.Use(name, getenv, &o, auth.ValidIssuer)
	if s == nil {
		return &exitcode.UsageError{Err: fmt.Errorf("--server %q is neither a URL nor a server named in a config file; 'mcptask servers' lists the names", name)}
	}
	for _, x := range ignored {
		warn(fmt.Sprintf("server %q in the project file %s is ignored: %s defines %q too, and your own config wins", name, x.Source, s.Source, name))
	}
	if err != nil {
		return err
	}
	if r.URL != "" {
		g.Server = r.URL
		g.Headers = append(g.Headers, r.Headers...)
		a.ClientID, a.ClientSecretEnv, a.ClientMetadataURL, a.Issuer, a.CallbackPort, a.Scopes = o.ClientID, o.ClientSecretEnv, o.ClientMetadataURL, o.Issuer, o.CallbackPort, o.Scopes
		return nil
	}
	g.Server = ""
	g.Stdio = strings.Join(output.QuoteAll(r.Argv), " ")
	g.StdioEnv = append(g.StdioEnv, r.Env...)
	sort.Strings(g.StdioEnv)
	return nil
}

// Connect is the connection settings of these flags for internal/connect: interactive says
// whether an OAuth login may be done inline, trace where --trace writes (when given).
func (g *Options) Connect(interactive bool, trace io.Writer) connect.Options {
	o := connect.Options{
		Protocol: g.Protocol, Insecure: g.Insecure, MaxConns: g.MaxConns,
		Record: g.Record, StatePath: g.StatePath, ConnectTimeout: g.ConnectTimeout,
		StdioEnv: g.StdioEnv, Server: g.Server, Headers: g.Headers,
		Auth: g.Auth,
	}
	o.Auth.Interactive = interactive
	if g.Trace {
		o.Trace = trace
	}
	return o
}

// Target is the server these flags name, for connect.NewRef; a stdio server starts in dir.
func (g *Options) Target(dir string) connect.Target {
	t := connect.Target{Server: g.Server, Stdio: g.Stdio, Headers: g.Headers, BearerEnv: g.BearerEnv, StdioEnv: g.StdioEnv}
	if g.Stdio != "" {
		t.Dir = dir
	}
	return t
}
