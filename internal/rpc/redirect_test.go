package rpc

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// sink is the other party of a redirect: it records every request that reaches it.
type sink struct {
	mu   sync.Mutex
	reqs []*http.Request
	srv  *httptest.Server
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"stolen":true}}`)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.reqs) }

// TestHTTPRedirectToAnotherOriginRefused: an MCP endpoint that answers 307 to another origin
// (another port on the same loopback host, or plain http from https) would get the user's
// --header values and even the Authorization header re-sent there by net/http's default
// policy, which compares host names only and strips nothing but Authorization and cookies.
// The transport refuses to follow, sends nothing to the other origin, and says what happened.
func TestHTTPRedirectToAnotherOriginRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		tls  bool
	}{{"other port", false}, {"https to http", true}} {
		t.Run(c.name, func(t *testing.T) {
			other := newSink(t)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.srv.URL+"/mcp", http.StatusTemporaryRedirect)
			})
			srv := httptest.NewUnstartedServer(h)
			if c.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			for _, shared := range []bool{false, true} {
				opts := HTTPOptions{Insecure: true, Header: http.Header{"X-Api-Key": {"k-secret"}, "Authorization": {"Bearer t-secret"}}}
				if shared {
					// A pool shared between transports (cmd's), built without a policy.
					opts.HTTPClient = &http.Client{Transport: NewPool(true, 0)}
				}
				tr, err := NewHTTPTransport(srv.URL+"/mcp", opts)
				if err != nil {
					t.Fatal(err)
				}
				_, err = tr.RoundTrip(t.Context(), req(1, "ping"), nil)
				var re *RedirectError
				if !errors.As(err, &re) || !errors.Is(err, ErrTransport) {
					t.Fatalf("shared pool %v: err = %v, want a RedirectError", shared, err)
				}
				msg := err.Error()
				for _, want := range []string{"redirected POST", other.srv.URL + "/mcp", "another origin", "--server"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
				tr.Close()
			}
			if n := other.count(); n != 0 {
				t.Fatalf("the other origin received %d requests (first with headers %v)", n, other.reqs[0].Header)
			}
		})
	}
}

// TestHTTPRedirectSameOriginFollowed: a redirect within the server's own origin is the
// server's own business; it is followed with the user's headers.
func TestHTTPRedirectSameOriginFollowed(t *testing.T) {
	var got http.Header
	tr, _ := newHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, "/v2/mcp", http.StatusPermanentRedirect)
			return
		}
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
	}, HTTPOptions{Header: http.Header{"X-Api-Key": {"k"}}})
	m, err := tr.RoundTrip(t.Context(), req(1, "ping"), nil)
	if err != nil || string(m.Result) != `{"ok":true}` {
		t.Fatalf("%v %v", m, err)
	}
	if got.Get("X-Api-Key") != "k" {
		t.Fatalf("the same-origin hop lost the user's header: %v", got)
	}
}

// TestSameOrigin pins what counts as one origin: scheme, host (case-insensitive) and port,
// the default port written or not.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"https://a.example/mcp", "https://A.example:443/other", true},
		{"http://a.example/mcp", "http://a.example:80/mcp", true},
		{"https://a.example/mcp", "http://a.example/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", false},
		{"https://a.example/mcp", "https://b.a.example/mcp", false},
		{"https://[::1]:9/mcp", "https://[::1]:9/x", true},
	} {
		if got := SameOrigin(mustURL(t, c.a), mustURL(t, c.b)); got != c.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
