package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Class 1 of the threat model: a server's text must never become a workflow command in a CI
// job's log (GitHub's runner, GitLab's log parser, the Azure Pipelines and TeamCity agents),
// nor a live link or HTML in the job summary.
//
// The modes put CI commands into every string the server sends: behind every Unicode
// white-space and format character (what .NET's TrimStart removes, what ICU's comparison looks
// through), in the legacy "##[" form, split by "\r" (a line end to .NET), as GitLab section
// markers, as stop-commands that would silence mcptask's own annotations, and as Markdown. Each
// command carries "pwned" in its text, so a test knows a command it finds is the server's.

func init() {
	Register(Mode{Name: "ci-commands", Class: 1,
		Doc: "puts CI workflow commands, GitLab section markers and Markdown into every status message, result text, error message and tool name",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return &ciAttack{next: next}
		}})
	Register(Mode{Name: "ci-commands-in-ids", Class: 1,
		Doc: "does what ci-commands does and also hands out task ids that are workflow commands (" + CITaskIDPrefix + "…)",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return &ciAttack{next: next, ids: true}
		}})
}

// CITaskIDPrefix is put before every task id in ci-commands-in-ids (and taken off again when
// the client sends the id back): printable ASCII, so that it is a valid id, and a command at a
// line's start and in the legacy form at once.
const CITaskIDPrefix = "::error::pwned-id##[add-mask]"

// CIPayload is the hostile text the ci modes add to a result's text and an error message
// (tag says which): one line per attack, each a command only to a parser that reads a line as
// the runner does — behind every character a runner might skip, after a lone "\r", with a
// long s for an "s" — and GitLab section markers. It holds no line that starts with "::" or
// "##[" in plain sight: a writer that wrapped a whole chunk for such a line would hide the
// subtler ones, so those are in CIBluntPayload, sent in other strings.
func CIPayload(tag string) string {
	var b strings.Builder
	cmd := func(format string, args ...any) {
		b.WriteString(fmt.Sprintf(format, args...))
		b.WriteString("\n")
	}
	for _, r := range ciSkipRunes() {
		if !strings.ContainsRune(ciClassicSpace, r) {
			cmd("%c::error::pwned-%s-%U", r, tag, r)
		}
	}
	cmd("ok\r\u3000::warning::pwned-%s-after-cr", tag)
	cmd("\u3000::\u017fet-output name=pwned::pwned-%s-long-s", tag)
	cmd("\u3000::error:\u00ad:pwned-%s-soft-hyphen-separator", tag)
	cmd("section_end:1:mcptask_1_task\r\x1b[0K pwned-%s", tag)
	cmd("\x1b[0Ksection_start:1:pwned_%s[collapsed=true]\r\x1b[0Kpwned fake section", tag)
	cmd("status ##vso[task.setvariable variable=PWNED]pwned-%s-azure", tag)
	cmd("#\u00ad#VSO[task.complete result=Succeeded;]pwned-%s-azure-hidden", tag)
	cmd("ok\r##vso[task.prependpath]/tmp/pwned-%s", tag)
	cmd("log ##teamcity[buildStatus status='SUCCESS' text='pwned-%s-teamcity']", tag)
	cmd("#\u200b#teamc\u0131ty[setParameter name='env.PATH' value='/tmp/pwned-%s']", tag)
	b.WriteString("\u3000::error::pwned-" + tag + "-last-line-without-end")
	return b.String()
}

// CIBluntPayload is the plain kind of attack, for the strings CIPayload is not in: commands at
// a line's start, the legacy "##[" form, a stop-commands that would silence mcptask's own
// annotations, a group's end, and Markdown, HTML and bare links for the job summary.
func CIBluntPayload(tag string) string {
	var classic []string
	for _, r := range ciClassicSpace {
		classic = append(classic, fmt.Sprintf("%c::error::pwned-%s-%U", r, tag, r))
	}
	return strings.Join(append(classic,
		"::error title=pwned::pwned-"+tag+"-plain",
		"text ##[set-env name=PWNED]pwned-"+tag+"-legacy",
		"##vso[task.complete result=Succeeded]pwned-"+tag+"-azure",
		"##teamcity[enableServiceMessages] pwned-"+tag+"-teamcity",
		"::stop-commands::pwnedstop-"+tag,
		"::endgroup::",
		"![pwned](https://evil.example/x.png) <img src=x onerror=alert(1)> | pwned | https://evil.example www.evil.example @octocat :rocket:",
	), "\n")
}

// ciClassicSpace are the characters before "::" that every CI writer knows to look through
// (ASCII white space, the no-break space, the byte order mark) and those a terminal filter
// removes (the controls U+000B, U+000C, U+0085, and U+2028, U+2029), which leave a plain "::"
// behind: in CIBluntPayload, with the other plain attacks.
const ciClassicSpace = " \t\v\f\u00a0\ufeff\u0085\u2028\u2029"

// ciSkipRunes are the characters that come before a command in CIPayload: every Unicode
// white-space character (Go's table and .NET's Char.IsWhiteSpace agree on them) and every
// format character (Cf), the byte order mark included.
func ciSkipRunes() []rune {
	var rs []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if (unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)) && r != '\n' && r != '\r' {
			rs = append(rs, r)
		}
	}
	return rs
}

type ciAttack struct {
	next http.Handler
	ids  bool
}

func (a *ciAttack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.ids && r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(CITaskIDPrefix)) {
			body = bytes.ReplaceAll(body, []byte(CITaskIDPrefix), nil)
			// The routing header carries the task id too (Mcp-Name): it must match the body.
			if r.Header.Get("Mcp-Name") != "" {
				var req struct {
					Params struct {
						TaskID string `json:"taskId"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &req) == nil && req.Params.TaskID != "" {
					r.Header.Set("Mcp-Name", rpc.EncodeHeaderValue(req.Params.TaskID))
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", fmt.Sprint(len(body)))
	}
	a.next.ServeHTTP(&ciWriter{ResponseWriter: w, a: a}, r)
}

// ciWriter rewrites the JSON-RPC messages of a response as they are written: a JSON body
// whole, an SSE stream event by event (so that a stream that stays open still flows).
type ciWriter struct {
	http.ResponseWriter
	a *ciAttack

	mu      sync.Mutex
	decided bool
	sse     bool
	buf     []byte
}

func (c *ciWriter) WriteHeader(code int) {
	c.decide()
	if !c.sse {
		c.Header().Del("Content-Length") // the body grows
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *ciWriter) decide() {
	if !c.decided {
		c.decided = true
		c.sse = strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream")
		c.Header().Del("Content-Length")
	}
}

func (c *ciWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.decide()
	c.buf = append(c.buf, p...)
	if !c.sse {
		// A JSON body is one message; it is complete once it parses.
		if json.Valid(bytes.TrimSpace(c.buf)) {
			out := c.a.rewrite(c.buf)
			c.buf = nil
			if _, err := c.ResponseWriter.Write(out); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	for {
		i := bytes.Index(c.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		event := c.buf[:i+2]
		c.buf = c.buf[i+2:]
		var out bytes.Buffer
		for _, line := range bytes.SplitAfter(event, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				out.WriteString("data: ")
				out.Write(c.a.rewrite(bytes.TrimSpace(data)))
				out.WriteString("\n")
				continue
			}
			out.Write(line)
		}
		if _, err := c.ResponseWriter.Write(out.Bytes()); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (c *ciWriter) Flush() {
	c.mu.Lock()
	if !c.sse && len(c.buf) > 0 { // not JSON after all: pass it on as it is
		_, _ = c.ResponseWriter.Write(c.buf)
		c.buf = nil
	}
	c.mu.Unlock()
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// rewrite puts the payload into one JSON-RPC message (or a batch).
func (a *ciAttack) rewrite(msg []byte) []byte {
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		return msg
	}
	v = a.walk(v, "")
	out, err := json.Marshal(v)
	if err != nil {
		return msg
	}
	return out
}

func (a *ciAttack) walk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = a.walk(e, k)
		}
		if x["type"] == "text" {
			if s, ok := x["text"].(string); ok {
				x["text"] = CIPayload("result") + "\n" + s
			}
		}
		if tools, ok := x["tools"].([]any); ok {
			x["tools"] = append(tools, map[string]any{
				"name":        "::error::pwned-tool##[set-env name=PWNED]x",
				"description": CIBluntPayload("tool-description"),
				"inputSchema": map[string]any{"type": "object"},
			})
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = a.walk(e, key)
		}
		return x
	case string:
		switch key {
		case "statusMessage":
			return CIBluntPayload("status") + "\n" + CIPayload("status") + "\n" + x
		case "message":
			return CIPayload("message") + "\n" + x
		case "taskId":
			if a.ids && !strings.HasPrefix(x, CITaskIDPrefix) {
				return CITaskIDPrefix + x
			}
		}
	}
	return v
}
