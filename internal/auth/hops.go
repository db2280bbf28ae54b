package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// Every party the OAuth client talks to is checked where it is talked to: each URL it fetches
// or posts to (protected resource metadata, authorization server metadata, registration,
// token), and each hop of a redirect, is https or a loopback address (Security
// Considerations §Communication Security); a request whose body carries a secret (a code
// verifier, a refresh token, a client secret or assertion) is never sent again to where a
// redirect points; and the MCP server gets a bearer only over https or on loopback.

// maxRedirects bounds the hops of one metadata or authorization GET.
const maxRedirects = 10

// CheckRedirect is the OAuth client's redirect policy (http.Client.CheckRedirect). A GET
// (metadata, the authorization URL under --browser follow) may follow a redirect whose
// target is https, or http on loopback (the loopback redirect URI); any other request is
// not followed at all: net/http would re-send a 307 or 308 POST body, and a token or
// registration request's body holds the code verifier, the refresh token or the client
// secret. golang.org/x/oauth2 leaves this to its caller's client, so this is that client's.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first, last := via[0], via[len(via)-1]
	if first.Method != http.MethodGet && first.Method != http.MethodHead {
		return &Error{Reason: ReasonFailed, Msg: fmt.Sprintf("%s %s answered with a redirect to %s; mcptask does not follow redirects of OAuth requests that carry credentials (code verifier, refresh token, client secret)",
			first.Method, safeURL(last.URL), safeURL(req.URL)),
			Hint: "check the endpoint in the authorization server's metadata"}
	}
	if !secureURL(req.URL) {
		return &Error{Reason: ReasonInsecure, Msg: fmt.Sprintf("%s redirected to %s, which is not https; mcptask speaks OAuth only over https (or to a loopback address)",
			safeURL(last.URL), safeURL(req.URL))}
	}
	if len(via) >= maxRedirects {
		return errorf(ReasonFailed, "stopped after %d redirects from %s", maxRedirects, safeURL(first.URL))
	}
	return nil
}

// NewHTTPClient returns the client for OAuth traffic: rt with CheckRedirect, no cookie jar
// and an overall timeout per request.
func NewHTTPClient(rt http.RoundTripper, timeout time.Duration) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: CheckRedirect, Timeout: timeout}
}

// secureURL reports whether u may carry OAuth traffic: https, or http to a loopback host.
func secureURL(u *url.URL) bool {
	return u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())
}

// insecureServer is the refusal to do OAuth with an MCP server reached over plain http on a
// host that is not loopback: its metadata could be rewritten on the way, and a token sent to
// it could be read on the way.
func insecureServer(serverURL string) *Error {
	return &Error{Reason: ReasonInsecure, Server: serverURL,
		Msg:  fmt.Sprintf("%s asks for an OAuth login, but it is plain http:// on a host that is not loopback; mcptask sends OAuth tokens only over https", termsafe.Line(serverURL)),
		Hint: "use the server's https:// URL, or give a token yourself with --bearer-env if you accept sending it in clear"}
}

// unwrapURLError returns the *Error a CheckRedirect refusal became inside net/http's
// *url.Error, so that its reason and message survive; any other error is returned as is.
func unwrapURLError(err error) error {
	var ae *Error
	var ue *url.Error
	if errors.As(err, &ue) && errors.As(ue.Err, &ae) {
		return ae
	}
	return err
}

func safeURL(u *url.URL) string {
	v := *u
	v.User, v.RawQuery, v.Fragment = nil, "", ""
	return termsafe.Line(v.String())
}
