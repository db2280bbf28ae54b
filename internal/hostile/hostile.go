// Package hostile is test support: an MCP server that attacks its client. The threat model in
// SECURITY.md says a server may run its own tools and nothing more; every promise mcptask makes
// against a server that wants more (CI logs, the terminal, credentials, redirects, time, size)
// is proven by a test that starts this server in one of its modes and asserts that the attack
// did not land.
//
// A mode wraps the real demo server (internal/demo): honest traffic is the demo's, and the mode
// rewrites, delays, redirects or records what it needs to. Each mode lives in its own file and
// registers itself, so the attacks of one class of the threat model stay together and new ones
// are added without touching the others. Start records every request the client sent, so a test
// can also assert what mcptask gave away (a header, a token, a body).
package hostile

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// Mode is one attack.
type Mode struct {
	// Name is what a test passes to Start, e.g. "ci-command-in-status".
	Name string
	// Class is the number of the threat-model class it attacks (SECURITY.md).
	Class int
	// Doc says in one sentence what the server does.
	Doc string
	// Wrap builds the attacking handler around the demo's handler (next). The Server gives
	// access to the requests recorded so far and to the server's own URL.
	Wrap func(s *Server, next http.Handler) http.Handler
}

var (
	regMu sync.Mutex
	modes = map[string]Mode{}
)

// Register adds a mode; each mode file calls it from init. A name registered twice panics.
func Register(m Mode) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := modes[m.Name]; dup {
		panic("hostile: mode registered twice: " + m.Name)
	}
	modes[m.Name] = m
}

// Modes lists every registered mode, by class and then name.
func Modes() []Mode {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Mode, 0, len(modes))
	for _, m := range modes {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Class != out[j].Class {
			return out[i].Class < out[j].Class
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Request is one request the client sent, as the hostile server saw it.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	Host   string
}

// Server is a running hostile server.
type Server struct {
	// URL is the MCP endpoint (…/mcp).
	URL string
	// Base is the server's origin (scheme://host:port).
	Base string

	mu     sync.Mutex
	reqs   []Request
	params map[string]string
}

// Set gives the mode a value it reads while serving (say, the address of a third party it
// names): a mode documents the keys it reads.
func (s *Server) Set(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.params == nil {
		s.params = map[string]string{}
	}
	s.params[key] = value
}

// Param is the value Set gave key, or "".
func (s *Server) Param(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params[key]
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Saw reports whether any request so far carried needle in a header value, the query or the
// body: the check a test makes that a secret was not given away.
func (s *Server) Saw(needle string) bool {
	for _, r := range s.Requests() {
		if bytes.Contains(r.Body, []byte(needle)) || bytes.Contains([]byte(r.Query), []byte(needle)) {
			return true
		}
		for _, vs := range r.Header {
			for _, v := range vs {
				if bytes.Contains([]byte(v), []byte(needle)) {
					return true
				}
			}
		}
	}
	return false
}

// Start runs the demo (a task step of 20 ms and a poll interval of 100 ms unless opts says
// otherwise) behind the named mode on a loopback port until the test ends. An unknown mode
// fails the test.
func Start(t testing.TB, mode string, opts demo.Options) *Server {
	t.Helper()
	return start(t, mode, opts, false)
}

// StartTLS is Start over https, with httptest's self-signed certificate (clients pass
// --insecure): for the attacks that need a secure origin to leave, such as a downgrade.
func StartTLS(t testing.TB, mode string, opts demo.Options) *Server {
	t.Helper()
	return start(t, mode, opts, true)
}

func start(t testing.TB, mode string, opts demo.Options, tls bool) *Server {
	t.Helper()
	regMu.Lock()
	m, ok := modes[mode]
	regMu.Unlock()
	if !ok {
		t.Fatalf("hostile: no mode %q", mode)
	}
	if opts.StepDelay == 0 {
		opts.StepDelay = 20 * time.Millisecond
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	d, err := demo.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	h := m.Wrap(s, d.Handler())
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: body, Host: r.Host})
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	// Base and URL are known before the first request can come in: modes read them while
	// serving (a metadata document names the server's own origin).
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	s.Base = scheme + hs.Listener.Addr().String()
	s.URL = s.Base + "/mcp"
	if tls {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	t.Cleanup(func() {
		hs.Close()
		_ = d.Close()
	})
	return s
}

// Rewrite answers r through next and hands the complete response body to edit, whose return
// value is sent instead (Content-Length adjusted). It buffers, so it suits JSON answers and
// SSE streams that end; a mode that must stream writes its own handler.
func Rewrite(next http.Handler, w http.ResponseWriter, r *http.Request, edit func(body []byte) []byte) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	body := edit(rec.Body.Bytes())
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}
