// Package redact is mcptask's one idea of what a credential looks like in what it writes
// down: the --trace log, the --record file (client and proxy), the task ledger and its cache,
// CI annotations and job summaries, and error messages. Every writer of those passes what it
// writes through here, so the lists below are the only ones: a JSON member, a form or query
// parameter, a header, or a value the user handed over (a --header value, a bearer token, a
// URL's query) is hidden the same way everywhere.
//
// It is a package of its own, importing only the standard library, because the packages
// that write records sit at every layer (rpc, proxy, state, ci, cmd) and each must be able to
// import it without importing one another: state must not learn rpc, and ci knows nothing of
// HTTP clients.
//
// The rules err on the side of hiding: a record that says [redacted] where a harmless value
// stood costs a reader a moment; a token in a CI log or a shared trace costs the user an
// account. The tool result mcptask prints on stdout is the server's answer, passed through
// unchanged; redaction is for records and logs.
package redact

import (
	"net/http"
	"strings"
	"sync"
)

// Mark replaces every hidden value.
const Mark = "[redacted]"

// urlMark replaces a password in a URL's userinfo, as net/url's URL.Redacted does.
const urlMark = "xxxxx"

// minValue is the shortest value that is hidden wherever it appears as a known secret: a
// shorter one (a --header value of "1") would blank out unrelated text, and is no credential.
const minValue = 6

// secretKeys are JSON member names, compared lower-case, whose values are credentials
// whatever their spelling; keys ending in _token, -token, _secret, -secret or "secret" are
// caught by their suffix (keySecret).
var secretKeys = set(
	"token", "secret", "password", "passwd", "passphrase", "code_verifier", "client_assertion", "assertion",
	"api_key", "apikey", "api-key", "private_key", "privatekey", "private-key", "device_code", "authorization",
	"cookie", "set-cookie", "proxy-authorization", "bearer", "credential", "credentials",
	// camelCase spellings of the OAuth and API names above.
	"accesstoken", "refreshtoken", "idtoken", "authtoken", "bearertoken", "apitoken", "sessiontoken",
	"registrationaccesstoken", "subjecttoken", "actortoken", "clientsecret", "codeverifier",
	"clientassertion", "devicecode", "privatetoken",
	// The short and cloud names: AWS's secretAccessKey and accessKey, a bare key, jwt, pwd,
	// auth (a member holding a credential, or an object of them).
	"key", "auth", "jwt", "pwd", "pass", "accesskey", "secretaccesskey", "secretkey", "sessionkey",
)

// keyShapes are the endings, of a member name lower-cased with '-', '_', '.' and ' ' removed,
// that make it a credential whatever comes before (signingKey, aws_secret_access_key,
// upstreamJwt, dbPassword, x.api.key): the shape half of the rule, where the list above is
// the names. "token" is not among them, so progressToken and nextCursor stay readable.
var keyShapes = []string{"secret", "password", "passwd", "passphrase", "apikey", "accesskey", "secretkey",
	"privatekey", "signingkey", "sessionkey", "jwt", "credential", "credentials", "accesstoken",
	"refreshtoken", "idtoken", "authtoken", "bearertoken", "apitoken", "sessiontoken", "clientassertion"}

// secretParams are the URL query and form parameter names, compared lower-case with '-', '_'
// and '.' removed, whose values are credentials, beyond the JSON keys: the names servers
// and signed URLs put credentials under.
var secretParams = set(
	"token", "key", "apikey", "secret", "password", "passwd", "pwd", "pass", "sig", "signature", "code",
	"auth", "authorization", "jwt", "bearer", "session", "sessionid", "credential", "credentials",
	"accesskey", "accesskeyid", "secretkey", "privatekey", "xamzsignature", "xamzcredential",
	"xamzsecuritytoken", "xgoogsignature", "xgoogcredential",
	"codeverifier", "clientsecret", "clientassertion", "assertion", "devicecode", "usercode",
)

// paramSuffixes make a parameter secret whatever precedes them (normalised as secretParams).
var paramSuffixes = []string{"token", "secret", "password", "apikey", "signature", "credential"}

// secretHeaders are header names, compared lower-case, whose values are credentials on
// every server.
var secretHeaders = set(
	"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey",
	"private-token", "x-auth-token", "x-access-token", "x-auth", "x-auth-key", "x-csrf-token",
	"x-amz-security-token", "x-goog-api-key", "ocp-apim-subscription-key", "x-functions-key",
	"authentication", "x-authorization", "x-refresh-token", "x-id-token", "x-client-secret",
)

// headerWords make a header secret when its lower-cased name contains one of them.
var headerWords = []string{"token", "secret", "api-key", "apikey", "api_key", "password", "passwd", "credential", "signature", "session-key"}

// headerParts make a header secret when one of the words of its name (split at '-' and '_')
// is one of them: X-Upstream-Auth, X-Jwt-Assertion, X-Pass, but not X-Passthrough.
var headerParts = set("auth", "authorization", "authentication", "jwt", "pass", "pwd", "assertion", "bearer", "key", "apikey", "cookie")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Key reports whether a JSON member of this name holds a credential: it ends in _token,
// _secret or _key (RFC 6749's access_token and refresh_token, RFC 7591/7592's client_secret
// and registration_access_token, OpenID's id_token), in either case, is one of the names
// above however it is spelled (secretKeys, with separators dropped), or has one of their
// shapes (keyShapes). "progressToken" and the JSON-RPC "code" are not credentials and are
// kept.
func Key(name string) bool {
	l := strings.ToLower(name)
	if secretKeys[l] {
		return true
	}
	for _, suf := range []string{"_token", "-token", "_secret", "-secret", "secret", "_password", "-password", "password", "_api_key", "_apikey", "-api-key", "_key_secret", "_key", "-key"} {
		if strings.HasSuffix(l, suf) {
			return true
		}
	}
	n := normParam(name)
	if secretKeys[n] {
		return true
	}
	for _, suf := range keyShapes {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// normParam lower-cases a parameter name and drops the separators people spell
// differently.
func normParam(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// Param reports whether a URL query or form parameter of this name holds a credential: a
// JSON key that does, or one of the names servers and signed URLs carry credentials in
// (token, key, api_key, sig, code, auth and the like).
func Param(name string) bool {
	if Key(name) {
		return true
	}
	n := normParam(name)
	if secretParams[n] {
		return true
	}
	for _, suf := range paramSuffixes {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// Header reports whether a header of this name carries a credential on every server:
// Authorization, cookies, the usual API key headers, any name with token, secret, password,
// credential or signature in it, and any with a word such as auth, jwt, pass, key or
// assertion (headerParts).
func Header(name string) bool {
	l := strings.ToLower(strings.TrimSpace(name))
	if secretHeaders[l] {
		return true
	}
	for _, w := range headerWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return headerByWord(l)
}

// headerByWord reports whether a word of the lower-case header name l is a credential word.
func headerByWord(l string) bool {
	for _, part := range strings.FieldsFunc(l, func(r rune) bool { return r == '-' || r == '_' }) {
		if headerParts[part] {
			return true
		}
	}
	return false
}

// headerByWordOnly reports whether name is a credential header only by the word rule.
func headerByWordOnly(name string) bool {
	l := strings.ToLower(strings.TrimSpace(name))
	if secretHeaders[l] {
		return false
	}
	for _, w := range headerWords {
		if strings.Contains(l, w) {
			return false
		}
	}
	return headerByWord(l)
}

// Redactor hides credentials in what one run writes down. Beyond the names every Redactor
// knows (Key, Param, Header), it knows the headers the user passed (whose values are the
// user's secrets by default: a record shows them as [redacted]) and secret values themselves,
// so that a value a server echoes back under any name is hidden too. The values it hunts
// everywhere are only those of credentials by name (Authorization, API key headers, a URL's
// token): a --header such as "MCP-Protocol-Version: 2025-11-25" must not blank out every date
// of a run. A nil *Redactor applies the shared rules only. It is safe for concurrent use.
type Redactor struct {
	headers []string // lower-case

	mu     sync.RWMutex
	values []string
}

// New returns a Redactor that also hides the headers named in headers and every value given.
func New(headers []string, values ...string) *Redactor {
	r := &Redactor{}
	r.AddHeaders(headers...)
	r.Learn(values...)
	return r
}

// authSchemes are the HTTP authentication schemes whose credential Learn also learns alone.
var authSchemes = set("bearer", "basic", "dpop", "token", "digest", "negotiate", "mac")

// Learn adds secret values to hide wherever they appear. For a credential of the form
// "Scheme value" (Bearer, Basic…) the value alone is learnt too. Values shorter than a few
// bytes are ignored.
func (r *Redactor) Learn(values ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		cands := []string{v}
		if scheme, rest, ok := strings.Cut(v, " "); ok && authSchemes[strings.ToLower(scheme)] {
			cands = append(cands, strings.TrimSpace(rest))
		}
		for _, c := range cands {
			if len(c) < minValue || c == Mark || containsString(r.values, c) {
				continue
			}
			r.values = append(r.values, c)
		}
	}
	// Longest first, so that a value that contains another is hidden whole.
	for i := 1; i < len(r.values); i++ {
		for j := i; j > 0 && len(r.values[j]) > len(r.values[j-1]); j-- {
			r.values[j], r.values[j-1] = r.values[j-1], r.values[j]
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// known returns the secret values learnt so far.
func (r *Redactor) known() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.values
}

// scrubValues replaces every known secret value in s.
func (r *Redactor) scrubValues(s string) string {
	for _, v := range r.known() {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mark)
		}
	}
	return s
}

// isSecretHeader reports whether the header name is secret for this run.
func (r *Redactor) isSecretHeader(name string) bool {
	if Header(name) {
		return true
	}
	return r.userHeader(name)
}

// userHeader reports whether name is one of the headers the user passed.
func (r *Redactor) userHeader(name string) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, h := range r.headers {
		if strings.EqualFold(h, strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}

// Headers returns a copy of h in which the value of every secret header (Header, and the
// ones given to New) is Mark, and every other value is scrubbed of known secrets and of
// credentials in URLs (a Location header may carry an OAuth code). The values of the secret
// headers are learnt, so that a server that echoes them is caught too.
func (r *Redactor) Headers(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if Header(k) {
			r.Learn(v...) // a credential by its name; a --header that is not keeps its value only here
		}
	}
	for k, v := range h {
		vals := make([]string, len(v))
		if r.isSecretHeader(k) {
			for i := range vals {
				vals[i] = Mark
			}
		} else {
			for i, s := range v {
				vals[i] = r.Text(s)
			}
		}
		out[k] = vals
	}
	return out
}

// Headers is Redactor.Headers with no headers or values of the run's own.
func Headers(h http.Header, extra ...string) http.Header { return New(extra).Headers(h) }

// AddHeaders adds header names whose values are secret for this run (the --header names).
func (r *Redactor) AddHeaders(names ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range names {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !containsString(r.headers, h) {
			r.headers = append(r.headers, h)
		}
	}
}
