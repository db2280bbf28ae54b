package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/mcptask/mcptask/internal/wirelog"
)

// Options are what a run asked of its connections. The Connector reads them (through the
// function given to New) each time it needs them, so that a command that settles a flag late
// (a named server, `auth login --scopes`, the demo's own URL) is heard.
type Options struct {
	// Protocol is auto, 2026-07-28 or 2025-11-25 (--protocol).
	Protocol string
	// Insecure skips TLS verification (--insecure); MaxConns bounds the connections to one
	// server (--max-conns).
	Insecure bool
	MaxConns int
	// Trace is where --trace writes (nil: off); Record is the --record file (empty: off).
	Trace  io.Writer
	Record string
	// StatePath is the ledger (--state): the metadata cache lives beside it.
	StatePath string
	// ConnectTimeout bounds a server's first answer (--connect-timeout; 0: no bound).
	ConnectTimeout time.Duration
	// StdioEnv is given to a stdio server named in a config file (KEY=VALUE).
	StdioEnv []string
	// Server and Headers are --server and --header as given now: a record reached again
	// takes its secrets from them, never from the ledger.
	Server  string
	Headers []string
	// Auth holds the OAuth settings.
	Auth AuthOptions
}

// Env is what the Connector needs from the outside world, fixed for the run.
type Env struct {
	Getenv func(string) string
	Now    func() time.Time
	// Stderr returns where warnings, a browser's output and --record's rule warnings go (the
	// command layer may wrap its streams after the Connector was made).
	Stderr func() io.Writer
	// Warn prints a warning line (cleaned and bounded by the command layer).
	Warn func(string)
	// Redactor is the run's redactor: it learns every secret the Connector is given.
	Redactor *redact.Redactor
	// Info is the client's name and version sent in the handshake.
	Info rpc.Implementation
	// OpenBrowser opens an authorization URL (nil: the system browser).
	OpenBrowser func(url string) error
}

// Connector turns server references into clients and owns what they share in one run.
type Connector struct {
	env  Env
	opts func() Options

	poolMu sync.Mutex
	pools  map[string]*http.Client

	recOnce sync.Once
	rec     *Recording
	recErr  error

	keysOnce sync.Once
	keys     *state.Keyring
	keysErr  error

	authMu       sync.Mutex
	authSessions map[string]*auth.Session
	authEnv      *auth.Env
}

// New returns a Connector for one run; opts is asked for the run's options when needed.
func New(env Env, opts func() Options) *Connector {
	return &Connector{env: env, opts: opts}
}

func (c *Connector) warnf(format string, args ...any) {
	if c.env.Warn != nil {
		c.env.Warn(fmt.Sprintf(format, args...))
	}
}

// LearnSecrets tells the run's redactor about the secrets of ref: the headers the user named
// (redacted wherever a record shows headers), the values of those that are credentials by
// name (Authorization, API key headers), and the credential parameters of its URL.
func (c *Connector) LearnSecrets(ref Ref, hdr http.Header) {
	red := c.env.Redactor
	red.AddHeaders(ref.HeaderNames...)
	for name, v := range hdr {
		if redact.Header(name) {
			red.Learn(v...)
		}
	}
	red.Learn(redact.URLSecrets(ref.URL)...)
}

// Dial opens a transport to ref and performs the era's opening. hdr holds the secret header
// values. The opening is bounded by ConnectTimeout even without a command's --timeout.
func (c *Connector) Dial(ctx context.Context, ref Ref, hdr http.Header, opts rpc.ClientOptions) (*rpc.Client, Ref, error) {
	o := c.opts()
	trace, err := c.TraceOptions(ref, &opts)
	if err != nil {
		return nil, ref, err
	}
	var t rpc.Transport
	if ref.URL != "" {
		ht, err := rpc.NewHTTPTransport(ref.URL, c.HTTPOptions(&ref, hdr, trace))
		if err != nil {
			return nil, ref, err
		}
		t = ht
	} else {
		st, err := rpc.NewRestartingStdio(ctx, rpc.StdioOptions{Argv: ref.Argv, Dir: ref.Dir, Env: c.StdioEnv(ref), Trace: trace})
		if err != nil {
			return nil, ref, fmt.Errorf("start %s: %w", ref.Argv[0], err)
		}
		t = st
		if opts.ProbeTimeout == 0 {
			opts.ProbeTimeout = 5 * time.Second
		}
	}
	if opts.Protocol == "" {
		opts.Protocol = o.Protocol
	}
	if opts.OnRestart == nil {
		opts.OnRestart = func(cause error) {
			c.warnf("the stdio server died (%v) and was started again; its tasks survive only if it keeps them", cause)
		}
	}
	opts.Info = c.env.Info
	c.cacheOptions(ref, hdr, &opts)
	cl := rpc.NewClient(t, opts)
	// A server that accepts the connection and never answers must not hold mcptask up.
	actx, stop := AnswerContext(ctx, o.ConnectTimeout)
	defer stop()
	if err := cl.Connect(actx); err != nil {
		_ = t.Close()
		if aerr := AnswerErr(actx, ref, "the connection", err); aerr != err {
			return nil, ref, aerr
		}
		return nil, ref, openErr(ref, err)
	}
	return cl, ref, nil
}

// OpenError is a connection that could not be opened, said as a person acts on it: what
// answered (nothing, a web page, a 404) and what to check, without the chain of the layers
// it passed through. Err is the error as the layers gave it (its type decides the exit code).
type OpenError struct {
	Msg string
	Err error
}

func (e *OpenError) Error() string { return e.Msg }
func (e *OpenError) Unwrap() error { return e.Err }

// openErr explains err, with which the opening of ref failed.
func openErr(ref Ref, err error) error {
	var ue *rpc.UnreachableError
	var nm *rpc.NotMCPError
	var he *rpc.HTTPError
	switch {
	case errors.As(err, &ue):
		return &OpenError{Msg: fmt.Sprintf("connect to %s: %v", ref, ue), Err: err}
	case errors.As(err, &nm):
		return &OpenError{Msg: fmt.Sprintf("%s is %v", ref, nm), Err: err}
	case errors.As(err, &he) && he.Status == http.StatusNotFound:
		hint := "most servers serve /mcp"
		if u, perr := url.Parse(ref.URL); perr == nil && u.Path != "/mcp" {
			u.Path, u.RawQuery, u.Fragment = "/mcp", "", ""
			hint += ": try --server " + u.Redacted()
		}
		return &OpenError{Msg: fmt.Sprintf("%s answered HTTP 404: there is no MCP endpoint at that path (%s)", ref, hint), Err: err}
	}
	return fmt.Errorf("connect to %s: %w", ref, err)
}

// Assume opens an HTTP client to ref in a known era without a handshake, reusing a
// 2025-11-25 session when one is given.
func (c *Connector) Assume(ctx context.Context, ref Ref, hdr http.Header, era rpc.Era, session string, opts rpc.ClientOptions) (*rpc.Client, Ref, error) {
	trace, err := c.TraceOptions(ref, &opts)
	if err != nil {
		return nil, ref, err
	}
	ht, err := rpc.NewHTTPTransport(ref.URL, c.HTTPOptions(&ref, hdr, trace))
	if err != nil {
		return nil, ref, err
	}
	opts.Info = c.env.Info
	cl := rpc.NewClient(ht, opts)
	cl.Assume(era, session)
	if session != "" {
		// The session belongs to a task; only a finished task releases it.
		cl.KeepSession(true)
	}
	return cl, ref, nil
}

// StdioEnv is the environment given to a stdio server: the config file's values when it was
// named there, else the named variables read again from mcptask's own environment (a resumed
// record keeps only their names).
func (c *Connector) StdioEnv(ref Ref) []string {
	if o := c.opts(); len(o.StdioEnv) > 0 {
		return o.StdioEnv
	}
	var env []string
	for _, name := range ref.EnvNames {
		if v := c.env.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// HTTPClient returns the one connection pool of the server at rawURL for this run: every
// connection (each 2025-11-25 session, each resumed group) to the same host shares it, so a
// thousand tasks on one server use at most MaxConns connections.
func (c *Connector) HTTPClient(rawURL string) *http.Client {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	key := u.Scheme + "://" + u.Host
	c.poolMu.Lock()
	defer c.poolMu.Unlock()
	if c.pools == nil {
		c.pools = map[string]*http.Client{}
	}
	if hc := c.pools[key]; hc != nil {
		return hc
	}
	o := c.opts()
	hc := rpc.NewHTTPClient(rpc.NewPool(o.Insecure, o.MaxConns))
	c.pools[key] = hc
	return hc
}

// HTTPOptions are the transport options of an HTTP server: the shared connection pool, and
// OAuth on top of it unless the user gave the Authorization header (--bearer-env, --header),
// which always wins. It records the OAuth session in ref.
func (c *Connector) HTTPOptions(ref *Ref, hdr http.Header, trace *rpc.TraceOptions) rpc.HTTPOptions {
	o := rpc.HTTPOptions{Header: hdr, Insecure: c.opts().Insecure, Trace: trace, HTTPClient: c.HTTPClient(ref.URL)}
	if hdr.Get("Authorization") != "" || o.HTTPClient == nil {
		return o
	}
	s, err := c.AuthSession(*ref)
	if err != nil {
		c.warnf("OAuth is off for this run: %v", err)
		return o
	}
	ref.Session = s
	o.HTTPClient = rpc.NewHTTPClient(&auth.Transport{Base: o.HTTPClient.Transport, Session: s})
	return o
}

// cacheOptions points the client at the metadata cache beside the ledger (state.CacheDir):
// the server/discover and tools/list answers a 2026-07-28 server marks cacheable are kept
// there, so a one-shot call skips them while they are fresh. Private answers are keyed by a
// fingerprint of the credentials sent (hdr), never by the credentials themselves.
func (c *Connector) cacheOptions(ref Ref, hdr http.Header, opts *rpc.ClientOptions) {
	if opts.Cache != nil {
		return
	}
	p, err := state.ResolvePath(c.opts().StatePath, c.env.Getenv)
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
		if ref.Session != nil {
			// The bearer comes from the OAuth session: key by its identity (server and
			// profile), since the token itself changes with every refresh.
			id = hdr.Clone()
			if id == nil {
				id = http.Header{}
			}
			id.Set("X-Mcptask-OAuth-Identity", ref.Session.Identity())
		}
		opts.Credential = CredentialFingerprint(id)
	}
}

// CachedTools is the tools of ref's fresh cached tools/list (rpc.CachedTools), reached with
// the secret headers hdr; nil when there is none. It sends nothing.
func (c *Connector) CachedTools(ref Ref, hdr http.Header) []*rpc.Tool {
	var opts rpc.ClientOptions
	c.cacheOptions(ref, hdr, &opts)
	return rpc.CachedTools(opts)
}

// Recording is the --record state of one run: the file, shared by every connection, and the
// linter that watches the traffic.
type Recording struct {
	mu     sync.Mutex // every connection writes whole lines through Write
	file   *os.File
	Linter *check.Linter
}

// Write appends p to the record file, one writer at a time.
func (r *Recording) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.file.Write(p)
}

// TraceOptions builds the transport's trace and record settings, and hooks the --record
// linter into the client options when recording.
func (c *Connector) TraceOptions(ref Ref, opts *rpc.ClientOptions) (*rpc.TraceOptions, error) {
	o := c.opts()
	if o.Trace == nil && o.Record == "" {
		return nil, nil
	}
	t := &rpc.TraceOptions{Secret: ref.HeaderNames, Redact: c.env.Redactor, W: o.Trace}
	if o.Record != "" {
		rec, err := c.Recorder()
		if err != nil {
			return nil, err
		}
		t.Record = rec
		opts.OnStreamNotice = rec.Linter.ObserveStream
		prev := opts.Observe
		opts.Observe = func(era rpc.Era, method string, params map[string]any, result json.RawMessage, err error) {
			rec.Linter.Observe(era, method, params, result, err)
			if prev != nil {
				prev(era, method, params, result, err)
			}
		}
	}
	return t, nil
}

// Recorder opens the --record file once per run (0600: it may hold tool arguments). A rule
// the server breaks is written there and warned about on stderr.
func (c *Connector) Recorder() (*Recording, error) {
	c.recOnce.Do(func() {
		path := c.opts().Record
		file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			c.recErr = exitcode.Usagef("--record %s: %v", path, err)
			return
		}
		r := &Recording{file: file}
		log := &wirelog.Log{Record: r, Redact: c.env.Redactor}
		r.Linter = check.NewLinter(func(v check.Violation) {
			l := &wirelog.Line{Kind: wirelog.KindViolation, Rule: v.Rule, Section: v.Section, TaskID: new(v.TaskID), Seen: v.Seen}
			log.Write(l)
			fmt.Fprintf(c.env.Stderr(), "mcptask: warning: the server broke rule %s (%s): %s\n", v.Rule, v.Section, termsafe.Line(l.Seen))
		})
		c.rec = r
	})
	return c.rec, c.recErr
}

// Close flushes and closes the --record file at the end of a run.
func (c *Connector) Close() {
	if c.rec != nil {
		_ = c.rec.file.Sync()
		_ = c.rec.file.Close()
	}
}
