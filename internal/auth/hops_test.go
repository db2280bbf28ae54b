package auth

import (
	"net/http"
	"net/url"
	"testing"
)

// TestCheckRedirectPerHop: a GET may follow a redirect to https or to loopback http (the
// redirect URI), never to plain http elsewhere; a POST follows nothing, wherever it points.
func TestCheckRedirectPerHop(t *testing.T) {
	hop := func(method, from, to string) error {
		f, _ := url.Parse(from)
		u, _ := url.Parse(to)
		return CheckRedirect(&http.Request{Method: http.MethodGet, URL: u}, []*http.Request{{Method: method, URL: f}})
	}
	for _, c := range []struct {
		method, from, to string
		reason           Reason
	}{
		{"GET", "https://as.example/.well-known/x", "https://cdn.example/x", ""},
		{"GET", "https://as.example/authorize", "http://127.0.0.1:8765/callback?code=c", ""},
		{"GET", "https://as.example/authorize", "http://[::1]:8765/callback", ""},
		{"GET", "https://as.example/.well-known/x", "http://as.example/x", ReasonInsecure},
		{"GET", "http://127.0.0.1:1/.well-known/x", "http://evil.example/x", ReasonInsecure},
		{"POST", "https://as.example/token", "https://as.example/token2", ReasonFailed},
		{"POST", "https://as.example/register", "http://127.0.0.1:1/register", ReasonFailed},
	} {
		err := hop(c.method, c.from, c.to)
		if got := ReasonOf(err); got != c.reason || (c.reason == "") != (err == nil) {
			t.Errorf("%s %s -> %s: %v (reason %q), want reason %q", c.method, c.from, c.to, err, got, c.reason)
		}
	}
}
