package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Reason says why an authorization failed, in the words the --json error's "reason" uses.
type Reason string

// The reasons a script can act on. They are a contract: never rename one, only add.
const (
	// ReasonLoginRequired: no usable credential, and a login is not allowed here.
	ReasonLoginRequired Reason = "login_required"
	// ReasonRefreshFailed: the stored refresh token was refused and no login is allowed here.
	ReasonRefreshFailed Reason = "refresh_failed"
	// ReasonInsufficientScope: the server kept answering 403 insufficient_scope.
	ReasonInsufficientScope Reason = "insufficient_scope"
	// ReasonResourceMismatch: the protected resource metadata names another resource.
	ReasonResourceMismatch Reason = "resource_mismatch"
	// ReasonIssuerMismatch: the authorization server metadata names another issuer.
	ReasonIssuerMismatch Reason = "issuer_mismatch"
	// ReasonIssMismatch: the authorization response's iss is missing or wrong (RFC 9207).
	ReasonIssMismatch Reason = "iss_mismatch"
	// ReasonIssuerRequired: a pre-registered client with a secret or key, and no issuer given
	// to bind it to (--issuer).
	ReasonIssuerRequired Reason = "issuer_required"
	// ReasonIssuerNotAllowed: the server names an authorization server other than the
	// issuer given (--issuer).
	ReasonIssuerNotAllowed Reason = "issuer_not_allowed"
	// ReasonInsecure: OAuth would have gone over plain http to a host that is not loopback
	// (the MCP server, a metadata document, an endpoint or a redirect hop).
	ReasonInsecure Reason = "insecure_transport"
	// ReasonFailed: discovery, registration or the token request failed otherwise.
	ReasonFailed Reason = "auth_failed"
)

// Error is an authorization failure. It matches rpc.ErrAuth, so every command maps it to
// exit code 7, and it carries the reason and the next step for the user.
type Error struct {
	Reason Reason
	// Server is the MCP server URL the credential was for.
	Server string
	Msg    string
	// Hint is the command that fixes it, when there is one.
	Hint string
	Err  error
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, rpc.ErrAuth) true: an authorization failure is exit code 7.
func (e *Error) Is(target error) bool { return target == rpc.ErrAuth }

// ReasonOf returns the reason of an authorization failure in err's chain, or "".
func ReasonOf(err error) Reason {
	var ae *Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return ""
}

// ReportedReason is the reason a --json error reports for err: the reason of an authorization
// failure in its chain, else login_required for an MCP server's bare HTTP 401 (a credential
// given by the user that the server refused), else "".
func ReportedReason(err error) Reason {
	if r := ReasonOf(err); r != "" {
		return r
	}
	var he *rpc.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		return ReasonLoginRequired
	}
	return ""
}

func errorf(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// loginHint is the command that logs in to server.
func loginHint(server, profile string) string {
	s := "run 'mcptask auth login --server " + shellQuote(server)
	if profile != "" {
		s += " --profile " + shellQuote(profile)
	}
	return s + "'"
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
