package rpc

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/termsafe"
)

// maxRedirects bounds the same-origin hops of one request (net/http's own default).
const maxRedirects = 10

// RedirectError is a redirect the MCP client refused to follow: to another origin (scheme,
// host or port), which includes any hop from https to http. The user's --header values, the
// --bearer-env token and the JSON-RPC body were sent to the server the user named and to no
// one else.
type RedirectError struct {
	// Method is the request's method (POST for a JSON-RPC message, GET for a stream).
	Method string
	// From is the URL that answered with the redirect; To is where it pointed. Both are
	// redacted of credentials and escaped for the terminal.
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("server redirected %s %s to %s; mcptask does not follow redirects to another origin; use that URL with --server if you trust it",
		e.Method, e.From, e.To)
}

// Unwrap makes a refused redirect a transport failure (exit 1): the server named cannot be
// spoken to where it is.
func (e *RedirectError) Unwrap() error { return ErrTransport }

// CheckRedirect is the redirect policy of every MCP HTTP client (http.Client.CheckRedirect):
// a hop within the origin of the first request is followed with all its headers, a few
// times at most; a hop to another origin is refused with a *RedirectError before anything
// is sent there. net/http's own policy would follow it and re-send every header but
// Authorization and Cookie, and those too when only the port or the scheme changes, so the
// user's --header values (X-Api-Key and the like) would reach a party nobody chose. Dropping
// them instead would still send the JSON-RPC body, tool arguments included, to that party.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if !SameOrigin(first.URL, req.URL) {
		return &RedirectError{Method: first.Method, From: safeURL(via[len(via)-1].URL), To: safeURL(req.URL)}
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects from %s", ErrTransport, maxRedirects, safeURL(first.URL))
	}
	return nil
}

// NewHTTPClient returns a client over rt with mcptask's redirect policy (CheckRedirect) and
// no cookie jar.
func NewHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: CheckRedirect}
}

// SameOrigin reports whether a and b are one origin (RFC 6454): the same scheme, host
// (case-insensitive) and port, a default port written or not.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && originHost(a) == originHost(b)
}

func originHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

func safeURL(u *url.URL) string { return termsafe.Line(redact.URL(u.String())) }
