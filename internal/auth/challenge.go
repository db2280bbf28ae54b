package auth

import (
	"net/http"
	"strings"
)

// Challenge is the Bearer challenge of a WWW-Authenticate header (RFC 6750 §3, RFC 9728 §5.1):
// its parameters, names lower-cased.
type Challenge struct {
	Params map[string]string
}

// ResourceMetadata is the resource_metadata URL of the challenge, or "".
func (c Challenge) ResourceMetadata() string { return c.Params["resource_metadata"] }

// Scopes are the scopes the challenge asks for (space-separated in the header).
func (c Challenge) Scopes() []string { return strings.Fields(c.Params["scope"]) }

// ErrorCode is the challenge's error parameter (invalid_token, insufficient_scope, ...).
func (c Challenge) ErrorCode() string { return c.Params["error"] }

// BearerChallenge finds the Bearer challenge among the WWW-Authenticate headers of h. A header
// can hold several challenges and a challenge several comma-separated parameters, quoted or
// not (RFC 9110 §11.6.1); anything that does not parse is skipped rather than trusted.
func BearerChallenge(h http.Header) (Challenge, bool) {
	for _, v := range h.Values("Www-Authenticate") {
		for _, ch := range parseChallenges(v) {
			if strings.EqualFold(ch.scheme, "bearer") {
				return Challenge{Params: ch.params}, true
			}
		}
	}
	return Challenge{Params: map[string]string{}}, false
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// parseChallenges reads `scheme [token68 | param=value *(, param=value)] *(, challenge)`.
func parseChallenges(s string) []rawChallenge {
	var out []rawChallenge
	p := &parser{s: s}
	for {
		p.skipSpaceAndCommas()
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			return out // garbage: stop here
		}
		ch := rawChallenge{scheme: scheme, params: map[string]string{}}
		for {
			p.skipSpace()
			save := p.i
			name := p.token()
			p.skipSpace()
			if name == "" || !p.eat('=') {
				// Not a parameter: the next challenge's scheme (or a token68, which Bearer
				// challenges do not use).
				p.i = save
				if name != "" && !p.done() && p.s[p.i] != ',' {
					p.token()
				}
				break
			}
			p.skipSpace()
			var value string
			if p.peek() == '"' {
				var ok bool
				value, ok = p.quoted()
				if !ok {
					out = append(out, ch)
					return out
				}
			} else {
				value = p.token()
			}
			ch.params[strings.ToLower(name)] = value
			p.skipSpace()
			if !p.eat(',') {
				break
			}
			// After a comma: another parameter, or the next challenge. Peek ahead.
			p.skipSpaceAndCommas()
			look := p.i
			n := p.token()
			p.skipSpace()
			isParam := n != "" && p.peek() == '='
			p.i = look
			if !isParam {
				break
			}
		}
		out = append(out, ch)
	}
}

type parser struct {
	s string
	i int
}

func (p *parser) done() bool { return p.i >= len(p.s) }

func (p *parser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *parser) eat(c byte) bool {
	if p.peek() == c && !p.done() {
		p.i++
		return true
	}
	return false
}

func (p *parser) skipSpace() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *parser) skipSpaceAndCommas() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// token reads an RFC 9110 token (and the token68 characters / and =, except a trailing =
// which starts a value).
func (p *parser) token() string {
	start := p.i
	for !p.done() {
		c := p.s[p.i]
		if c == ' ' || c == '\t' || c == ',' || c == '"' || c == '=' {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string with backslash escapes.
func (p *parser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.s):
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case c == '"':
			p.i++
			return b.String(), true
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", false
}
