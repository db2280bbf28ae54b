package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestKeyParamHeader(t *testing.T) {
	for _, k := range []string{"access_token", "Refresh_Token", "ID_TOKEN", "registration_access_token", "client_secret", "code_verifier",
		"password", "client_assertion", "assertion", "accessToken", "clientSecret", "x-session-token", "subject_token", "device_code",
		// The credential names the second audit found kept (SECURITY.md §10's list and shape).
		"secretAccessKey", "accessKey", "jwt", "pwd", "auth", "key", "Key", "signing_key", "upstreamJwt", "dbPassword", "aws_secret_access_key"} {
		if !Key(k) {
			t.Errorf("Key(%q) = false", k)
		}
	}
	for _, k := range []string{"progressToken", "code", "taskId", "token_type", "expires_in", "nextCursor", "message", "tokens", "keys",
		"authorization_servers", "token_endpoint_auth_methods_supported", "client_secret_expires_at", "primaryKeyword"} {
		if Key(k) {
			t.Errorf("Key(%q) = true", k)
		}
	}
	for _, p := range []string{"token", "api_key", "apikey", "API-KEY", "key", "sig", "signature", "code", "auth", "secret", "X-Amz-Signature", "client_secret", "access_token"} {
		if !Param(p) {
			t.Errorf("Param(%q) = false", p)
		}
	}
	for _, p := range []string{"state", "page", "limit", "iss", "grant_type", "scope", "resource"} {
		if Param(p) {
			t.Errorf("Param(%q) = true", p)
		}
	}
	for _, h := range []string{"Authorization", "proxy-authorization", "COOKIE", "Set-Cookie", "X-Api-Key", "Api-Key", "Private-Token", "X-Auth-Token", "X-Goog-Api-Key", "X-Vendor-Secret", "X-Team-Key",
		"X-Upstream-Auth", "X-Jwt-Assertion", "X-Pass", "X-Pwd", "X_Auth"} {
		if !Header(h) {
			t.Errorf("Header(%q) = false", h)
		}
	}
	for _, h := range []string{"Content-Type", "Mcp-Session-Id", "WWW-Authenticate", "Location", "Mcp-Method", "X-Passthrough", "Keep-Alive", "X-Author"} {
		if Header(h) {
			t.Errorf("Header(%q) = true", h)
		}
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h/mcp":                                       "https://h/mcp",
		"https://h/mcp?token=S3CRET&x=1":                      "https://h/mcp?token=[redacted]&x=1",
		"https://u:pw@h/mcp":                                  "https://u:xxxxx@h/mcp",
		"https://TOKEN123@h/mcp":                              "https://xxxxx@h/mcp",
		"http://127.0.0.1:5/cb?code=C&state=s#id_token=T&x=y": "http://127.0.0.1:5/cb?code=[redacted]&state=s#id_token=[redacted]&x=y",
		"https://h/?refresh%5Ftoken=R":                        "https://h/?refresh%5Ftoken=[redacted]",
		"https://h/?API_KEY=k1&Sig=s1":                        "https://h/?API_KEY=[redacted]&Sig=[redacted]",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONKeepsWhatIsNotSecret(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"_meta":{"progressToken":7}},"error":{"code":-32000}}`
	if got := string(JSON([]byte(in))); got != in {
		t.Errorf("changed: %s", got)
	}
	in = `{ "a" : { "refresh\u005ftoken" : {"x":[1,2]} , "b":"Bearer abcdefgh123"}, "t":"{\"client_secret\":\"CS1234\"}"}`
	got := string(JSON([]byte(in)))
	for _, s := range []string{"abcdefgh123", "CS1234", `"x"`} {
		if strings.Contains(got, s) {
			t.Errorf("kept %s: %s", s, got)
		}
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("not JSON: %s", got)
	}
}

func TestTextAndValues(t *testing.T) {
	r := New([]string{"X-Team"}, "Bearer userbearer42", "teamsecret77")
	in := `Post "https://h/mcp?api_key=querysecret9": dial; echo userbearer42 and teamsecret77; Authorization: Bearer other12345; {"access_token":"at123456"} refresh_token=rt123456`
	got := r.Text(in)
	for _, s := range []string{"querysecret9", "userbearer42", "teamsecret77", "other12345", "at123456", "rt123456"} {
		if strings.Contains(got, s) {
			t.Errorf("kept %s: %s", s, got)
		}
	}
	h := r.Headers(http.Header{"X-Team": {"v"}, "Www-Authenticate": {`Bearer resource_metadata="https://h/.well-known/x"`}, "Content-Type": {"application/json"}})
	if h.Get("X-Team") != Mark || h.Get("Content-Type") != "application/json" || !strings.Contains(h.Get("Www-Authenticate"), "resource_metadata=") {
		t.Errorf("headers: %v", h)
	}
}

// checkJSON fails when a member Key names holds anything but Mark, at any depth, in doc or
// in a string of it that holds JSON.
func checkJSON(t *testing.T, v any, path string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if Key(k) {
				if e != Mark {
					t.Fatalf("%s.%q survived: %v", path, k, e)
				}
				continue
			}
			checkJSON(t, e, path+"."+k)
		}
	case []any:
		for i, e := range x {
			checkJSON(t, e, fmt.Sprintf("%s[%d]", path, i))
		}
	case string:
		var inner any
		if s := strings.TrimSpace(x); len(s) > 1 && (s[0] == '{' || s[0] == '[') && json.Unmarshal([]byte(s), &inner) == nil {
			checkJSON(t, inner, path+"(json)")
		}
	}
}

// secretKeysForFuzz are spellings of credential names the generator hides secrets under.
var secretKeysForFuzz = []string{"access_token", "refresh_token", "id_token", "registration_access_token", "client_secret",
	"code_verifier", "password", "client_assertion", "assertion", "X_Token", "accessToken", "api_key"}

// escapeKey writes name as a JSON string, with each byte picked by rnd written as \u00XX
// and its case changed at random.
func escapeKey(rnd *rand.Rand, name string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(name) {
		if rnd.IntN(3) == 0 && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if rnd.IntN(3) == 0 {
			fmt.Fprintf(&b, `\u%04x`, c)
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// genJSON builds a document with secrets at random depths under secret keys, in strings
// holding JSON, in URLs and in form-like text. It returns the secrets it placed.
func genJSON(rnd *rand.Rand, depth int, secrets *[]string) string {
	secret := func() string {
		s := fmt.Sprintf("S%dQ%d", rnd.IntN(1e6), len(*secrets))
		*secrets = append(*secrets, s)
		return s
	}
	if depth <= 0 {
		switch rnd.IntN(5) {
		case 0:
			return fmt.Sprint(rnd.IntN(100))
		case 1:
			return `"https://h/mcp?token=` + secret() + `&page=2"`
		case 2:
			return `"grant_type=refresh_token&refresh_token=` + secret() + `"`
		}
		return `"plain"`
	}
	if rnd.IntN(2) == 0 {
		var parts []string
		for range rnd.IntN(4) {
			parts = append(parts, genJSON(rnd, depth-1, secrets))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var parts []string
	for range 1 + rnd.IntN(4) {
		switch rnd.IntN(4) {
		case 0:
			k := escapeKey(rnd, secretKeysForFuzz[rnd.IntN(len(secretKeysForFuzz))])
			v := `"` + secret() + `"`
			if rnd.IntN(3) == 0 {
				v = genJSON(rnd, depth-1, secrets)
				v = `{"inner":` + v + `,"v":"` + secret() + `"}`
			}
			parts = append(parts, k+" : "+v)
		case 1:
			inner := genJSON(rnd, depth-1, secrets)
			b, _ := json.Marshal(inner)
			parts = append(parts, `"text":`+string(b))
		default:
			parts = append(parts, fmt.Sprintf(`"k%d":%s`, rnd.IntN(9), genJSON(rnd, depth-1, secrets)))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// FuzzJSON feeds the redactor documents with secrets under escaped secret keys at random
// depths, in strings that hold JSON, in URLs and in form text: no secret survives, and the
// output is JSON whose every secret member says [redacted].
func FuzzJSON(f *testing.F) {
	for i := range 16 {
		f.Add(uint64(i), uint8(1+i%5))
	}
	f.Fuzz(func(t *testing.T, seed uint64, depth uint8) {
		rnd := rand.New(rand.NewPCG(seed, seed>>7))
		var secrets []string
		doc := genJSON(rnd, int(depth%6)+1, &secrets)
		if !json.Valid([]byte(doc)) {
			t.Fatalf("generator made invalid JSON: %s", doc)
		}
		out := JSON([]byte(doc))
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		checkJSON(t, v, "$")
		canon, _ := json.Marshal(v)
		for _, s := range secrets {
			if strings.Contains(string(out), s) || strings.Contains(string(canon), s) {
				t.Fatalf("secret %s survived:\nin  %s\nout %s", s, doc, out)
			}
		}
	})
}

// FuzzJSONBytes feeds arbitrary bytes: valid JSON stays valid and every secret member, as
// encoding/json reads the output, says [redacted].
func FuzzJSONBytes(f *testing.F) {
	for _, s := range []string{`{"access_token":"a"}`, `{"a":{"refresh\u005ftoken":[1,{"x":2}]}}`, `[{"Client_Secret":null}]`,
		`{"a":"{\"id_token\":\"x\"}"}`, `{"a":1,"a":2,"password":true}`, `"x"`, `{"\ud800":"y","assertion":"\u0041"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := JSON(data)
		if !json.Valid(data) {
			return
		}
		// Numbers are read as json.Number: a valid JSON number may not fit a float64.
		var v any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || !json.Valid(out) {
			t.Fatalf("output is not JSON: %v\nin  %s\nout %s", err, data, out)
		}
		checkJSON(t, v, "$")
	})
}

// FuzzForm: in a form body or a URL query, every parameter Param names says [redacted],
// however its name is escaped or cased, and known values are gone.
func FuzzForm(f *testing.F) {
	f.Add("grant_type=refresh_token&refresh_token=RT1&client_secret=CS&resource=https%3A%2F%2Fm", "Sv4lue1")
	f.Add("refresh%5Ftoken=R&Code=C&code_verifier=V&x=Sv4lue1", "Sv4lue1")
	f.Fuzz(func(t *testing.T, body, value string) {
		r := New(nil, value)
		out := string(r.Form([]byte(body)))
		q, _ := url.ParseQuery(strings.ReplaceAll(out, ";", "&"))
		for k, vs := range q {
			if Param(k) {
				for _, v := range vs {
					if v != Mark && v != "" {
						t.Fatalf("%q=%q survived: %s", k, v, out)
					}
				}
			}
		}
		u := r.URL("https://h/mcp?" + body)
		q, _ = url.ParseQuery(strings.ReplaceAll(strings.TrimPrefix(u, "https://h/mcp?"), ";", "&"))
		for k, vs := range q {
			if Param(k) && !strings.Contains(k, "#") {
				for _, v := range vs {
					if v != Mark && v != "" && !strings.Contains(v, "#") {
						t.Fatalf("URL %q=%q survived: %s", k, v, u)
					}
				}
			}
		}
	})
}

// FuzzHeaders: a secret header keeps no value, in any case of its name, and known values are
// gone from every other header.
func FuzzHeaders(f *testing.F) {
	f.Add("authorization", "Bearer tok123456", "x-custom")
	f.Add("X-API-KEY", "k", "X-Custom")
	f.Add("pRiVaTe-ToKeN", "v", "Content-Type")
	f.Fuzz(func(t *testing.T, name, value, user string) {
		r := New([]string{user})
		h := r.Headers(http.Header{name: {value}, "X-Echo": {"saw " + value}})
		if (Header(name) || (strings.TrimSpace(user) != "" && strings.EqualFold(strings.TrimSpace(name), strings.TrimSpace(user)))) && h[name][0] != Mark {
			t.Fatalf("%s: %q survived", name, h[name][0])
		}
		if Header(name) && len(strings.TrimSpace(value)) >= minValue && !strings.EqualFold(name, "X-Echo") && strings.Contains(h["X-Echo"][0], strings.TrimSpace(value)) && !strings.Contains(Mark, strings.TrimSpace(value)) {
			t.Fatalf("echo of %s survived: %q", name, h["X-Echo"][0])
		}
	})
}

// FuzzText: a value the Redactor knows never survives Text or JSON, wherever it stands and
// however a JSON string escapes it; a secret header line in any case keeps no value.
func FuzzText(f *testing.F) {
	f.Add("prefix %s suffix", uint64(1), "AuThOrIzAtIoN")
	f.Add(`{"seen":"%s"}`, uint64(2), "x-api-key")
	f.Add("%s%s", uint64(3), "Private-Token")
	f.Fuzz(func(t *testing.T, tmpl string, seed uint64, header string) {
		rnd := rand.New(rand.NewPCG(seed, 3))
		value := fmt.Sprintf("K%dv%d", 100000+rnd.IntN(900000), rnd.IntN(1000))
		r := New(nil, value)
		text := strings.ReplaceAll(tmpl, "%s", value)
		if got := r.Text(text); strings.Contains(got, value) {
			t.Fatalf("Text kept %s: %q", value, got)
		}
		var esc strings.Builder
		for _, c := range []byte(value) {
			if rnd.IntN(2) == 0 {
				fmt.Fprintf(&esc, `\u%04x`, c)
			} else {
				esc.WriteByte(c)
			}
		}
		doc := `{"seen":"` + esc.String() + `","list":["a ` + esc.String() + ` b"]}`
		out := r.JSON([]byte(doc))
		var v any
		if json.Unmarshal(out, &v) != nil {
			t.Fatalf("not JSON: %s", out)
		}
		canon, _ := json.Marshal(v)
		if strings.Contains(string(canon), value) {
			t.Fatalf("JSON kept %s: %s", value, out)
		}
		// In free text a name that is a credential only by one of its words ("Key", "Auth")
		// counts only with an "X-" prefix (isSecretHeaderLine), so that prose stays readable;
		// every other credential header's line must lose its value.
		if h := strings.TrimSpace(header); Header(h) && isToken(h) && r.isSecretHeaderLine(h) {
			line := h + ": secretvalue99"
			if got := r.Text(line); strings.Contains(got, "secretvalue99") {
				t.Fatalf("header line kept its value: %q", got)
			}
		}
	})
}

// BenchmarkJSON is the cost a --record line pays per message: a typical task status answer.
func BenchmarkJSON(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"step 3 of 10: building https://example.com/artifacts/x.tar.gz","createdAt":"2026-11-25T23:00:00Z","lastUpdatedAt":"2026-11-25T23:00:03Z","ttl":60000,"pollInterval":1000,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"786512e2"}}}}`)
	r := New([]string{"X-Team"}, "Bearer some-user-token-123")
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		r.JSON(msg)
	}
}

// isToken reports whether s is an RFC 9110 token: what a header name can be.
func isToken(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// A value split between writes is still hidden, and nothing is held back after Flush.
func TestWriter(t *testing.T) {
	var out strings.Builder
	r := New(nil)
	w := &Writer{W: &out, R: r}
	_, _ = w.Write([]byte("before any secret\n"))
	r.Learn("split-secret-77")
	for _, p := range []string{"a split-se", "cret-77 b\nc split-secret", "-77"} {
		_, _ = w.Write([]byte(p))
	}
	_ = w.Flush()
	if got := out.String(); got != "before any secret\na [redacted] b\nc [redacted]" {
		t.Errorf("got %q", got)
	}
}

// FuzzCredentialNames fuzzes the naming rule of SECURITY.md §10: a member name made of any
// prefix and one of the credential shapes (keyShapes), in snake, kebab, camel, Pascal, upper
// or dotted spelling, is a credential, and its value never survives JSON; a header whose
// name has one of the credential words (headerParts) is one too.
func FuzzCredentialNames(f *testing.F) {
	for i := range 24 {
		f.Add("upstream", uint8(i), uint8(i%6))
	}
	f.Add("", uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, prefix string, word, style uint8) {
		prefix = strings.Map(func(r rune) rune {
			if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return -1
		}, prefix)
		shape := keyShapes[int(word)%len(keyShapes)]
		var name string
		switch style % 6 {
		case 0:
			name = prefix + "_" + shape
		case 1:
			name = prefix + "-" + shape
		case 2:
			name = prefix + strings.ToUpper(shape[:1]) + shape[1:]
		case 3:
			name = strings.ToUpper(prefix) + strings.ToUpper(shape[:1]) + shape[1:]
		case 4:
			name = strings.ToUpper(prefix + "_" + shape)
		default:
			name = prefix + "." + shape
		}
		if !Key(name) {
			t.Fatalf("Key(%q) = false", name)
		}
		const secret = "s3cr3t-value-0xC0FFEE"
		doc, _ := json.Marshal(map[string]any{"outer": map[string]string{name: secret}})
		if out := JSON(doc); strings.Contains(string(out), secret) {
			t.Fatalf("%s survived: %s", name, out)
		}
		parts := make([]string, 0, len(headerParts))
		for p := range headerParts {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		h := "X-" + prefix + "-" + parts[int(word)%len(parts)]
		if style%2 == 1 {
			h = strings.ToUpper(h)
		}
		if !Header(h) {
			t.Fatalf("Header(%q) = false", h)
		}
	})
}

// TestTextKeepsProseWords: the short credential names and header words count in JSON
// bodies and real headers, but free text keeps mcptask's own words ("KEY=JSON" in a hint, a
// task id ending in -bearer before a colon), while an X- header line quoted in an error is
// still hidden.
func TestTextKeepsProseWords(t *testing.T) {
	for _, s := range []string{"answer with 'mcptask update ID --answer KEY=JSON'", "task planted-bearer: its record was not written", "auth=none"} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q", s, got)
		}
	}
	if got := Text("X-Upstream-Auth: s3cr3t-upstream"); strings.Contains(got, "s3cr3t") {
		t.Errorf("an X- header line kept its value: %q", got)
	}
	if got := string(JSON([]byte(`{"key":"s3cr3t-k","auth":"s3cr3t-a"}`))); strings.Contains(got, "s3cr3t") {
		t.Errorf("JSON kept %s", got)
	}
}
