package auth

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptask/mcptask/internal/termsafe"
)

// A pre-registered client's secret or private key was issued by one authorization server and
// means nothing to any other, except to an attacker: a server that names its own
// authorization server in its protected resource metadata would otherwise receive the secret
// at its token endpoint (client_secret_basic/post) or an assertion signed with the key. So
// such a client is bound to the issuer the user says it was registered at (--issuer,
// oauth.issuer), and without one it is not used at all. Dynamically registered clients are
// bound by construction: the store keys them by issuer and never lends one to another.

// ValidIssuer reports whether s can be an issuer identifier mcptask talks to: an https URL,
// or http on a loopback address, with a host and no query or fragment (RFC 8414 §2).
func ValidIssuer(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && u.RawQuery == "" && u.Fragment == "" && secureURL(u)
}

// boundClient reports whether the configured pre-registered client holds a credential that
// must stay with its issuer: a secret or a signing key.
func (s *Session) boundClient() bool {
	return s.cfg.ClientID != "" && (s.cfg.ClientSecret != "" || s.cfg.ClientKey != nil)
}

// pickIssuer chooses among the authorization servers a server's protected resource metadata
// lists (RFC 9728 §7.6 leaves the choice to the client): the issuer the user named when it
// is listed, and nothing else; else, unless a bound client is configured, the first one.
func (s *Session) pickIssuer(listed []string) (string, error) {
	srv := s.cfg.ServerURL
	names := termsafe.Line(strings.Join(listed, ", "))
	if want := s.cfg.ClientIssuer; want != "" {
		if slices.Contains(listed, want) {
			return want, nil
		}
		return "", &Error{Reason: ReasonIssuerNotAllowed, Server: srv,
			Msg: fmt.Sprintf("%s sends its clients to the authorization server %s, not to %s, the issuer given with --issuer (or oauth.issuer); mcptask authorizes only there and sends no client credential elsewhere",
				srv, names, want),
			Hint: "if the server really moved, register mcptask at its new authorization server and give that --client-id and --issuer; otherwise do not trust this server with the login"}
	}
	if s.boundClient() {
		return "", &Error{Reason: ReasonIssuerRequired, Server: srv,
			Msg: fmt.Sprintf("%s sends its clients to the authorization server %s, but the client secret or key of --client-id %s is sent only to the issuer it was registered at, and none was given",
				srv, names, termsafe.Line(s.cfg.ClientID)),
			Hint: "if the client was registered at " + termsafe.Line(listed[0]) + ", add --issuer " + termsafe.Line(listed[0]) + " (or \"issuer\" in the server's oauth settings, or $MCPTASK_ISSUER)"}
	}
	return listed[0], nil
}

// checkBound is the last check before a pre-registered client's secret or key is used at
// issuer: it must be the issuer the client is bound to.
func (s *Session) checkBound(issuer string) error {
	if !s.boundClient() || issuer == s.cfg.ClientIssuer {
		return nil
	}
	if s.cfg.ClientIssuer == "" {
		return &Error{Reason: ReasonIssuerRequired, Server: s.cfg.ServerURL,
			Msg:  fmt.Sprintf("the client secret or key of --client-id %s is sent only to the issuer it was registered at, and none was given", termsafe.Line(s.cfg.ClientID)),
			Hint: "if the client was registered at " + termsafe.Line(issuer) + ", add --issuer " + termsafe.Line(issuer)}
	}
	return &Error{Reason: ReasonIssuerNotAllowed, Server: s.cfg.ServerURL,
		Msg: fmt.Sprintf("the stored login for %s is with the authorization server %s, not with %s (--issuer); the client secret or key is not sent there",
			s.cfg.ServerURL, termsafe.Line(issuer), s.cfg.ClientIssuer),
		Hint: loginHint(s.cfg.ServerURL, s.cfg.Profile)}
}
