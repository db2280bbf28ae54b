package redact

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"regexp"
	"strings"
)

// URL returns u with the password of its userinfo (or a lone user name, which is a token as
// often as not) replaced, and the value of every query or fragment parameter that Param
// names replaced by Mark. The rest stays byte for byte, order included, so that the same URL
// always redacts to the same text: the ledger keys servers by it.
func URL(u string) string { return (*Redactor)(nil).URL(u) }

// URL is the package's URL with the run's known secret values hidden too.
func (r *Redactor) URL(u string) string {
	if !strings.ContainsAny(u, "?#@") && len(r.known()) == 0 {
		return u
	}
	rest, frag, hasFrag := strings.Cut(u, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if scheme, after, ok := strings.Cut(base, "://"); ok {
		auth, path := after, ""
		if i := strings.IndexAny(after, "/"); i >= 0 {
			auth, path = after[:i], after[i:]
		}
		if at := strings.LastIndex(auth, "@"); at >= 0 {
			user, _, hasPass := strings.Cut(auth[:at], ":")
			if hasPass {
				auth = user + ":" + urlMark + auth[at:]
			} else {
				auth = urlMark + auth[at:]
			}
		}
		base = scheme + "://" + auth + path
	}
	out := r.scrubValues(base)
	if hasQuery {
		out += "?" + r.params(query)
	}
	if hasFrag {
		out += "#" + r.params(frag)
	}
	return out
}

// params redacts a query string or form body: name=value pairs separated by '&' (or ';').
func (r *Redactor) params(q string) string {
	if q == "" {
		return q
	}
	var b strings.Builder
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		b.WriteString(r.param(q[start:i]))
		if i < len(q) {
			b.WriteByte(q[i])
		}
		start = i + 1
	}
	return b.String()
}

func (r *Redactor) param(p string) string {
	name, value, ok := strings.Cut(p, "=")
	if !ok {
		return r.scrubValues(p)
	}
	key := name
	if k, err := url.QueryUnescape(name); err == nil {
		key = k
	}
	if Param(key) {
		return name + "=" + Mark
	}
	if v, err := url.QueryUnescape(value); err == nil && v != value && r.scrubValues(v) != v {
		return name + "=" + Mark
	}
	return name + "=" + r.scrubValues(value)
}

// Form redacts an application/x-www-form-urlencoded body (an OAuth token request).
func (r *Redactor) Form(data []byte) []byte {
	return []byte(r.params(string(data)))
}

// Body redacts a message body by its media type: a form body by parameter, JSON by member,
// anything else as text.
func (r *Redactor) Body(contentType string, data []byte) []byte {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		return r.Form(data)
	case json.Valid(data):
		return r.JSON(data)
	}
	return []byte(r.Text(string(data)))
}

var (
	// urlInText finds URLs in prose: an error message that quotes the request URL.
	urlInText = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)
	// memberInText finds "name": value pairs in text that is not whole JSON (a cut body, a
	// message quoting JSON).
	memberInText = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"?|[^\s,}\]]+)`)
	// pairInText finds name=value pairs in text (a form body quoted in an error).
	pairInText = regexp.MustCompile(`([A-Za-z0-9_.\-]+)=([^&\s"'<>,;]+)`)
	// headerInText finds header lines in text ("Authorization: Bearer …").
	// The name is an RFC 9110 token.
	headerInText = regexp.MustCompile("(?m)([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*([^\r\n]+)")
	// schemeInText finds credentials of an HTTP authentication scheme in text.
	schemeInText = regexp.MustCompile(`(?i)\b(bearer|basic|dpop)\s+([A-Za-z0-9\-._~+/]{6,}=*)`)
)

// Text redacts free text: an error message, a status message, a body that is not JSON. It
// hides the known secret values, credentials in URLs, secret JSON members and name=value
// pairs, secret header lines, and the credentials of Bearer and Basic.
func Text(s string) string { return (*Redactor)(nil).Text(s) }

// Text is the package's Text with the run's own secrets hidden too.
func (r *Redactor) Text(s string) string {
	s = r.scrubValues(s)
	if strings.Contains(s, "://") && strings.ContainsAny(s, "?#@") {
		s = urlInText.ReplaceAllStringFunc(s, r.URL)
	}
	if !r.mayHold(s) {
		return s
	}
	if strings.Contains(s, `"`) && strings.Contains(s, ":") {
		s = memberInText.ReplaceAllStringFunc(s, func(m string) string {
			sub := memberInText.FindStringSubmatch(m)
			var name string
			if json.Unmarshal([]byte(`"`+sub[1]+`"`), &name) != nil {
				name = sub[1]
			}
			if !Key(name) || sub[2] == `"`+Mark+`"` {
				return m
			}
			return m[:len(m)-len(sub[2])] + `"` + Mark + `"`
		})
	}
	if strings.Contains(s, "=") {
		s = pairInText.ReplaceAllStringFunc(s, func(m string) string {
			name, value, _ := strings.Cut(m, "=")
			if !Key(name) || textPlainNames[strings.ToLower(name)] || value == Mark {
				return m
			}
			return name + "=" + Mark
		})
	}
	if strings.Contains(s, ":") {
		s = headerInText.ReplaceAllStringFunc(s, func(m string) string {
			name, value, _ := strings.Cut(m, ":")
			if !r.isSecretHeaderLine(name) || strings.TrimSpace(value) == Mark || strings.HasPrefix(strings.TrimSpace(value), "//") {
				return m
			}
			return name + ": " + Mark
		})
	}
	if len(s) >= minValue {
		s = redactSchemes(s)
	}
	return s
}

// textPlainNames are member names that are credentials in a JSON body but too common as the
// words of prose to hide as name=value in free text (mcptask's own "--answer KEY=JSON").
var textPlainNames = set("key", "auth")

// isSecretHeaderLine is isSecretHeader for a "Name: value" line met in free text, where a
// name is only a header by its look: the word rule (headerParts) counts only for an "X-" name,
// so that "task planted-bearer: …" stays readable.
func (r *Redactor) isSecretHeaderLine(name string) bool {
	if !headerByWordOnly(name) || strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), "x-") {
		return r.isSecretHeader(name)
	}
	// A credential only by a word of its name: secret in prose only when the user named it.
	return r.userHeader(name)
}

// hintWords are the fragments (lower-case) that every name Key, Param or Header reports and
// every credential scheme contains one of. Text that holds none of them, in any case, can hold
// no named credential, and is spared the regular expressions: most strings of a record.
var hintWords = []string{"token", "secret", "pass", "key", "auth", "cookie", "assert", "verifier", "credential",
	"sig", "code", "session", "bearer", "basic", "dpop", "jwt", "pwd"}

// hintsByFirst indexes hintWords by their first byte, so that mayHold reads s once.
var hintsByFirst = func() (t [256][]string) {
	for _, w := range hintWords {
		t[w[0]] = append(t[w[0]], w)
		t[w[0]-'a'+'A'] = append(t[w[0]-'a'+'A'], w)
	}
	return t
}()

// mayHold reports whether s may hold a named credential: it contains a hint word or the name
// of one of the run's secret headers, in any case.
func (r *Redactor) mayHold(s string) bool {
	for i := 0; i < len(s); i++ {
		for _, w := range hintsByFirst[s[i]] {
			if hasPrefixFold(s[i:], w) {
				return true
			}
		}
	}
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, h := range r.headers {
		if containsFold(s, h) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word w in any case.
func hasPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains the ASCII word w (lower-case) in any case, without
// allocating.
func containsFold(s, w string) bool {
	n := len(w)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// redactSchemes hides the credential after "Bearer", "Basic" or "DPoP" (RFC 9110 §11.4's
// token68), and leaves a challenge's auth-params (Bearer resource_metadata="…") alone.
func redactSchemes(s string) string {
	idx := schemeInText.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		cred := s[m[4]:m[5]]
		end := m[5]
		if strings.HasPrefix(Mark, cred) || cred == Mark[1:len(Mark)-1] {
			continue
		}
		if end < len(s) && (s[end] == '"' || (strings.HasSuffix(cred, "=") && s[end] != ' ' && s[end] != ',')) {
			continue // name="value": an auth-param, not a credential
		}
		b.WriteString(s[last:m[4]])
		b.WriteString(Mark)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// JSON redacts a JSON text: the value of every member whose name Key reports (at any depth,
// however the name is escaped) becomes "[redacted]", and every string is redacted as Text (a
// string that holds JSON, as a tool's text content often does, as JSON). Everything else
// stays byte for byte. A text that is not valid JSON is redacted as Text.
func JSON(data []byte) []byte { return (*Redactor)(nil).JSON(data) }

// JSON is the package's JSON with the run's own secrets hidden too.
func (r *Redactor) JSON(data []byte) []byte {
	if !json.Valid(data) {
		return []byte(r.Text(string(data)))
	}
	w := &walker{r: r, in: data}
	w.value()
	if !w.changed {
		return data
	}
	return append(w.out, data[w.last:]...)
}

// walker rewrites a valid JSON text, copying what it keeps and splicing in what it replaces.
type walker struct {
	r       *Redactor
	in      []byte
	pos     int
	out     []byte
	last    int
	changed bool
}

func (w *walker) replace(from, to int, with []byte) {
	w.out = append(w.out, w.in[w.last:from]...)
	w.out = append(w.out, with...)
	w.last = to
	w.changed = true
}

func (w *walker) space() {
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case ' ', '\t', '\r', '\n':
			w.pos++
		default:
			return
		}
	}
}

// str moves past a string and returns its bytes, quotes included.
func (w *walker) str() []byte {
	start := w.pos
	w.pos++
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case '\\':
			w.pos += 2
			continue
		case '"':
			w.pos++
			return w.in[start:w.pos]
		}
		w.pos++
	}
	return w.in[start:]
}

func unquote(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 && len(q) >= 2 {
		return string(q[1 : len(q)-1])
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}

var redactedJSON = []byte(`"` + Mark + `"`)

func (w *walker) value() {
	w.space()
	if w.pos >= len(w.in) {
		return
	}
	switch w.in[w.pos] {
	case '{':
		w.pos++
		for {
			w.space()
			if w.pos >= len(w.in) || w.in[w.pos] == '}' {
				w.pos++
				return
			}
			if w.in[w.pos] == ',' {
				w.pos++
				continue
			}
			name := unquote(w.str())
			w.space()
			w.pos++ // ':'
			w.space()
			if Key(name) {
				start := w.pos
				w.skip()
				w.replace(start, w.pos, redactedJSON)
				continue
			}
			w.value()
		}
	case '[':
		w.pos++
		for {
			w.space()
			if w.pos >= len(w.in) || w.in[w.pos] == ']' {
				w.pos++
				return
			}
			if w.in[w.pos] == ',' {
				w.pos++
				continue
			}
			w.value()
		}
	case '"':
		start := w.pos
		q := w.str()
		s := unquote(q)
		t := s
		if trimmed := strings.TrimSpace(s); len(trimmed) > 1 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid([]byte(trimmed)) {
			t = string(w.r.JSON([]byte(s)))
		} else {
			t = w.r.Text(s)
		}
		if t != s {
			b, _ := json.Marshal(t)
			w.replace(start, w.pos, b)
		}
	default:
		for w.pos < len(w.in) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(w.in[w.pos])) {
			w.pos++
		}
	}
}

// skip moves past one value without looking into it.
func (w *walker) skip() {
	depth := 0
	for w.pos < len(w.in) {
		switch c := w.in[w.pos]; c {
		case '"':
			w.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
			if depth == 0 {
				w.pos++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		}
		w.pos++
	}
}

// URLSecrets returns the credentials URL would hide in u: the values of its credential
// parameters (as written and unescaped) and its userinfo. A Redactor learns them, so that a
// server that echoes its own URL's token is caught.
func URLSecrets(u string) []string {
	var out []string
	rest, frag, _ := strings.Cut(u, "#")
	base, query, _ := strings.Cut(rest, "?")
	if _, after, ok := strings.Cut(base, "://"); ok {
		if i := strings.IndexByte(after, '/'); i >= 0 {
			after = after[:i]
		}
		if at := strings.LastIndex(after, "@"); at >= 0 {
			user, pass, _ := strings.Cut(after[:at], ":")
			out = append(out, user, pass)
		}
	}
	for _, q := range []string{query, frag} {
		for _, p := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
			name, value, ok := strings.Cut(p, "=")
			if !ok || value == "" {
				continue
			}
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if !Param(name) {
				continue
			}
			out = append(out, value)
			if v, err := url.QueryUnescape(value); err == nil && v != value {
				out = append(out, v)
			}
		}
	}
	return out
}

// Hidden reports whether u is a URL that URL redacted: one that lost a credential.
func Hidden(u string) bool {
	return strings.Contains(u, "="+Mark) || strings.Contains(u, urlMark+"@") || strings.Contains(u, ":"+urlMark+"@")
}
