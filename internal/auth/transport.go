package auth

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Transport is the http.RoundTripper that puts OAuth on an MCP server's requests: each
// request carries the session's bearer (never in the URL), and a 401, or a 403 with
// error="insufficient_scope", runs the session's flow and sends the request again, a few
// times at most. A request that already carries an Authorization header (--bearer-env, an
// explicit --header) is left alone: the user's choice wins.
type Transport struct {
	Base    http.RoundTripper
	Session *Session
}

// maxRetries bounds the re-sends of one request after a 401 or 403.
const maxRetries = 3

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" || !sameOrigin(req.URL.String(), t.Session.cfg.ServerURL) {
		return t.Base.RoundTrip(req)
	}
	if !secureURL(req.URL) {
		// Security Considerations §Communication Security: no token over plain http to a
		// host that is not loopback, not even one stored by an earlier run.
		resp, err := t.Base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, insecureServer(t.Session.cfg.ServerURL)
	}
	ctx := req.Context()
	tok, err := t.Session.Token(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		r := req.Clone(ctx)
		if attempt > 0 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := t.Base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		ch, _ := BearerChallenge(resp.Header)
		if resp.StatusCode == http.StatusForbidden && ch.ErrorCode() != "insufficient_scope" {
			return resp, nil // a plain 403: not something a new token fixes
		}
		canResend := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if !canResend {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if attempt >= maxRetries {
			return nil, t.giveUp(resp.StatusCode, ch)
		}
		if resp.StatusCode == http.StatusUnauthorized {
			tok, err = t.Session.Unauthorized(ctx, tok, ch)
		} else {
			tok, err = t.Session.StepUp(ctx, tok, ch)
		}
		if err != nil {
			return nil, err
		}
	}
}

// giveUp is the error after the server refused every renewed credential.
func (t *Transport) giveUp(status int, ch Challenge) error {
	srv := t.Session.cfg.ServerURL
	if status == http.StatusForbidden {
		return &Error{Reason: ReasonInsufficientScope, Server: srv,
			Msg: fmt.Sprintf("%s still answers 403 insufficient_scope (scope %q) after %d attempts", srv, ch.Params["scope"], maxRetries)}
	}
	return &Error{Reason: ReasonLoginRequired, Server: srv, Msg: fmt.Sprintf("%s still answers 401 after %d fresh credentials", srv, maxRetries),
		Hint: loginHint(srv, t.Session.cfg.Profile)}
}

// sameOrigin reports whether a and b share scheme and host: a token goes only to the server
// it was issued for.
func sameOrigin(a, b string) bool {
	ai, bi := strings.Index(a, "://"), strings.Index(b, "://")
	if ai < 0 || bi < 0 {
		return false
	}
	ha, hb := a[ai+3:], b[bi+3:]
	if i := strings.IndexAny(ha, "/?#"); i >= 0 {
		ha = ha[:i]
	}
	if i := strings.IndexAny(hb, "/?#"); i >= 0 {
		hb = hb[:i]
	}
	return strings.EqualFold(a[:ai], b[:bi]) && strings.EqualFold(ha, hb)
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
