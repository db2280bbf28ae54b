package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
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
	fs.DurationVar(&g.ConnectTimeout, "connect-timeout", DefaultConnectTimeout, "give up on a server that has not answered connecting, its handshake or a one-shot request after `D` (exit 1; 0 waits as long as it takes; $MCPTASK_CONNECT_TIMEOUT)")
	g.Auth.addFlags(fs)
}

// ServerRef says how a server was reached, without any secret: it is what a task record
// keeps so that the task can be found again.
type ServerRef struct {
	URL         string   `json:"url,omitempty"`
	Argv        []string `json:"argv,omitempty"`
	Dir         string   `json:"dir,omitempty"`
	HeaderNames []string `json:"headerNames,omitempty"`
	BearerEnv   string   `json:"bearerEnv,omitempty"`
	// EnvNames are the names (never the values) of variables given to a stdio server.
	EnvNames []string `json:"envNames,omitempty"`
	// OAuth names the stored OAuth credential a resumed task's server was reached with.
	OAuth *state.OAuth `json:"oauth,omitempty"`
	// auth is the live OAuth session of this run, which learns the issuer on first use.
	auth *auth.Session
}

// String is the short form shown to users.
func (r ServerRef) String() string {
	if r.URL != "" {
		return redact.URL(r.URL) // shown in messages, summaries and envelopes: no credential
	}
	return "stdio:" + redact.Text(strings.Join(r.Argv, " ")) // --api-key=… shown as [redacted]
}

// serverRef validates the connection flags and describes the server, without connecting.
// Usage problems come back as FlagErrors so that nothing is sent.
func (f *Factory) serverRef() (ServerRef, http.Header, error) {
	g := f.Global
	var ref ServerRef
	switch {
	case g.Server != "" && g.Stdio != "":
		return ref, nil, flagErrorf("give either --server or --stdio, not both")
	case g.Server == "" && g.Stdio == "":
		return ref, nil, flagErrorf("no server: give --server URL or --stdio 'command args' (or set MCPTASK_SERVER)")
	case g.Server != "":
		u, err := url.Parse(g.Server)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ref, nil, flagErrorf("--server %q is not an http:// or https:// URL", g.Server)
		}
		if u.User != nil {
			return ref, nil, flagErrorf("--server URL must not carry credentials; use --bearer-env or --header")
		}
		ref.URL = g.Server
	default:
		argv, err := splitCommand(g.Stdio)
		if err != nil {
			return ref, nil, flagErrorf("--stdio: %v", err)
		}
		if len(argv) == 0 {
			return ref, nil, flagErrorf("--stdio needs a command")
		}
		ref.Argv = argv
		ref.Dir, _ = os.Getwd()
		for _, kv := range g.StdioEnv {
			name, _, _ := strings.Cut(kv, "=")
			ref.EnvNames = append(ref.EnvNames, name)
		}
	}
	if g.ConnectTimeout < 0 {
		return ref, nil, flagErrorf("--connect-timeout %s: want a duration such as 30s, or 0 to wait as long as it takes", g.ConnectTimeout)
	}
	switch g.Protocol {
	case "auto", rpc.VersionModern, rpc.VersionLegacy:
	default:
		return ref, nil, flagErrorf("--protocol %q: want auto, %s or %s", g.Protocol, rpc.VersionModern, rpc.VersionLegacy)
	}
	hdr := http.Header{}
	for _, h := range g.Headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return ref, nil, flagErrorf("--header %q: want 'Name: value'", redactHeaderArg(h))
		}
		if strings.ContainsAny(value, "\r\n") {
			return ref, nil, flagErrorf("--header %s: value must not contain a line break", name)
		}
		hdr.Add(name, strings.TrimSpace(value))
		ref.HeaderNames = append(ref.HeaderNames, http.CanonicalHeaderKey(name))
	}
	if g.BearerEnv != "" {
		tok := f.Getenv(g.BearerEnv)
		if tok == "" {
			return ref, nil, flagErrorf("--bearer-env %s: that environment variable is empty or unset", g.BearerEnv)
		}
		hdr.Set("Authorization", "Bearer "+tok)
		ref.BearerEnv = g.BearerEnv
	}
	if ref.Argv != nil && len(hdr) > 0 {
		return ref, nil, flagErrorf("--header and --bearer-env apply to --server only, not --stdio")
	}
	if err := f.checkAuthFlags(); err != nil {
		return ref, nil, err
	}
	f.learnSecrets(ref, hdr)
	return ref, hdr, nil
}

// redactHeaderArg keeps the name of a malformed --header argument and hides the rest.
func redactHeaderArg(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok {
		return name + ": [redacted]"
	}
	if len(h) > 3 {
		return h[:3] + "…"
	}
	return h
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
	trace, err := f.traceOptions(ref, &opts)
	if err != nil {
		return nil, ref, err
	}
	var t rpc.Transport
	if ref.URL != "" {
		ht, err := rpc.NewHTTPTransport(ref.URL, f.httpOptions(&ref, hdr, trace))
		if err != nil {
			return nil, ref, err
		}
		t = ht
	} else {
		st, err := rpc.NewRestartingStdio(ctx, rpc.StdioOptions{Argv: ref.Argv, Dir: ref.Dir, Env: f.stdioEnv(ref), Trace: trace})
		if err != nil {
			return nil, ref, fmt.Errorf("start %s: %w", ref.Argv[0], err)
		}
		t = st
		if opts.ProbeTimeout == 0 {
			opts.ProbeTimeout = 5 * time.Second
		}
	}
	if opts.Protocol == "" {
		opts.Protocol = f.Global.Protocol
	}
	if opts.OnRestart == nil {
		opts.OnRestart = func(cause error) {
			f.warnf("the stdio server died (%v) and was started again; its tasks survive only if it keeps them", cause)
		}
	}
	opts.Info = rpc.Implementation{Name: "mcptask", Version: Version}
	f.cacheOptions(ref, hdr, &opts)
	c := rpc.NewClient(t, opts)
	// The opening is bounded even without --timeout: a server that accepts the connection
	// and never answers must not hold mcptask up (--connect-timeout).
	actx, stop := f.answerContext(ctx)
	defer stop()
	if err := c.Connect(actx); err != nil {
		_ = t.Close()
		if aerr := answerErr(actx, ref, "the connection", err); aerr != err {
			return nil, ref, aerr
		}
		return nil, ref, fmt.Errorf("connect to %s: %w", ref, err)
	}
	return c, ref, nil
}

// splitCommand splits a --stdio command line the way a POSIX shell would split words: single
// quotes, double quotes and backslash escapes, no expansion.
func splitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// stdioEnv is the environment given to a stdio server: the config file's values when it was
// named there, else the named variables read again from mcptask's own environment (a resumed
// record keeps only their names).
func (f *Factory) stdioEnv(ref ServerRef) []string {
	if len(f.Global.StdioEnv) > 0 {
		return f.Global.StdioEnv
	}
	var env []string
	for _, name := range ref.EnvNames {
		if v := f.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// httpClient returns the one connection pool of the server at rawURL for this run: every
// connection (each 2025-11-25 session, each resumed group) to the same host shares it, so a
// thousand tasks on one server use at most --max-conns connections.
func (f *Factory) httpClient(rawURL string) *http.Client {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	key := u.Scheme + "://" + u.Host
	f.poolMu.Lock()
	defer f.poolMu.Unlock()
	if f.pools == nil {
		f.pools = map[string]*http.Client{}
	}
	if c := f.pools[key]; c != nil {
		return c
	}
	c := rpc.NewHTTPClient(rpc.NewPool(f.Global.Insecure, f.Global.MaxConns))
	f.pools[key] = c
	return c
}

// cacheOptions points the client at the metadata cache beside the ledger (state.CacheDir):
// the server/discover and tools/list answers a 2026-07-28 server marks cacheable are kept
// there, so a one-shot call skips them while they are fresh. Private answers are keyed by a
// fingerprint of the credentials sent (hdr), never by the credentials themselves.
func (f *Factory) cacheOptions(ref ServerRef, hdr http.Header, opts *rpc.ClientOptions) {
	if opts.Cache != nil {
		return
	}
	p, err := state.ResolvePath(f.Global.StatePath, f.Getenv)
	if err != nil {
		return
	}
	opts.Cache = state.NewCache(state.CacheDir(p))
	opts.CacheServer = ref.URL
	if ref.URL == "" {
		opts.CacheServer = "stdio\x00" + strings.Join(ref.Argv, "\x00") + "\x00" + ref.Dir + "\x00" + strings.Join(ref.EnvNames, ",")
	}
	if opts.Credential == "" {
		id := hdr
		if ref.auth != nil {
			// The bearer comes from the OAuth session: key by its identity (server and
			// profile), since the token itself changes with every refresh.
			id = hdr.Clone()
			if id == nil {
				id = http.Header{}
			}
			id.Set("X-Mcptask-OAuth-Identity", ref.auth.Identity())
		}
		opts.Credential = credentialFingerprint(id)
	}
}

// credentialFingerprint is a one-way digest of the header values sent to a server (the
// bearer token, --header values): it tells credentials apart without keeping any of them.
func credentialFingerprint(hdr http.Header) string {
	if len(hdr) == 0 {
		return "none"
	}
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		for _, v := range hdr.Values(k) {
			fmt.Fprintf(h, "%s\x00%s\x00", k, v)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
