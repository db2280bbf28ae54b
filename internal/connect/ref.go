// Package connect turns a server reference (the connection flags, or a ledger record) into
// an rpc.Client. It owns what the connections of one run share: the HTTP connection pools,
// the OAuth sessions, the --trace and --record sinks with the --record linter, the metadata
// cache, the ledger keyring that decides which records may be reached again, and the bound
// on a server's first answer (--connect-timeout).
//
// Nothing here prints but warnings, and nothing knows flags or commands: what a run asked for
// comes in as Options, and problems the user fixes (a missing header, an unset variable) come
// back as exitcode.UsageError, which the command layer maps to exit 2.
package connect

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/state"
)

// Ref says how a server was reached, without any secret: it is what a task record keeps so
// that the task can be found again.
type Ref struct {
	URL         string   `json:"url,omitempty"`
	Argv        []string `json:"argv,omitempty"`
	Dir         string   `json:"dir,omitempty"`
	HeaderNames []string `json:"headerNames,omitempty"`
	BearerEnv   string   `json:"bearerEnv,omitempty"`
	// EnvNames are the names (never the values) of variables given to a stdio server.
	EnvNames []string `json:"envNames,omitempty"`
	// OAuth names the stored OAuth credential a resumed task's server was reached with.
	OAuth *state.OAuth `json:"oauth,omitempty"`
	// Session is the live OAuth session of this run, which learns the issuer on first use.
	Session *auth.Session `json:"-"`
	// StoredLoginOnly says ref comes from a ledger record that resumes unsigned (it names only
	// a URL, and anyone could have written it): its OAuth session may send a credential
	// already stored for that URL and run nothing to get one (auth.Config.StoredOnly).
	StoredLoginOnly bool `json:"-"`
}

// String is the short form shown to users.
func (r Ref) String() string {
	if r.URL != "" {
		return redact.URL(r.URL) // shown in messages, summaries and envelopes: no credential
	}
	return "stdio:" + redact.Text(strings.Join(r.Argv, " ")) // --api-key=… shown as [redacted]
}

// Server is the secret-free description of r that a record keeps: a URL's credential
// parameters are redacted, so a resume asks for the URL again (Connector.Record).
func (r Ref) Server() state.Server {
	return state.Server{
		URL:         redact.URL(r.URL),
		Command:     r.Argv,
		Dir:         r.Dir,
		HeaderNames: r.HeaderNames,
		BearerEnv:   r.BearerEnv,
		EnvNames:    r.EnvNames,
		OAuth:       r.oauthRecord(),
	}
}

// oauthRecord is what a ledger record keeps of the OAuth login: issuer and profile, never a
// token.
func (r Ref) oauthRecord() *state.OAuth {
	if r.Session != nil {
		if issuer, profile, ok := r.Session.Used(); ok {
			return &state.OAuth{Issuer: issuer, Profile: profile}
		}
	}
	return r.OAuth
}

// FromServer turns a record's server back into a Ref.
func FromServer(s state.Server) Ref {
	return Ref{URL: s.URL, Argv: s.Command, Dir: s.Dir, HeaderNames: s.HeaderNames, BearerEnv: s.BearerEnv, EnvNames: s.EnvNames, OAuth: s.OAuth}
}

// Target is a server as the user names it on the command line.
type Target struct {
	// Server is the Streamable HTTP URL (--server), Stdio the command line of a stdio server
	// (--stdio); exactly one is set.
	Server, Stdio string
	// Headers are 'Name: value' pairs (--header); BearerEnv names the variable holding a
	// bearer token (--bearer-env).
	Headers   []string
	BearerEnv string
	// StdioEnv holds KEY=VALUE pairs for a stdio server named in a config file.
	StdioEnv []string
	// Dir is the stdio server's working directory.
	Dir string
}

// NewRef validates t and describes its server, without connecting; hdr holds the secret
// header values. Problems are UsageErrors, so that nothing is sent.
func NewRef(t Target, getenv func(string) string) (ref Ref, hdr http.Header, err error) {
	switch {
	case t.Server != "" && t.Stdio != "":
		return ref, nil, exitcode.Usagef("give either --server or --stdio, not both")
	case t.Server == "" && t.Stdio == "":
		return ref, nil, exitcode.Usagef("no server: give --server URL or --stdio 'command args' (or set MCPTASK_SERVER)")
	case t.Server != "":
		u, err := url.Parse(t.Server)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ref, nil, exitcode.Usagef("--server %q is not an http:// or https:// URL", t.Server)
		}
		if u.User != nil {
			return ref, nil, exitcode.Usagef("--server URL must not carry credentials; use --bearer-env or --header")
		}
		ref.URL = t.Server
	default:
		argv, err := SplitCommand(t.Stdio)
		if err != nil {
			return ref, nil, exitcode.Usagef("--stdio: %v", err)
		}
		if len(argv) == 0 {
			return ref, nil, exitcode.Usagef("--stdio needs a command")
		}
		ref.Argv = argv
		ref.Dir = t.Dir
		for _, kv := range t.StdioEnv {
			name, _, _ := strings.Cut(kv, "=")
			ref.EnvNames = append(ref.EnvNames, name)
		}
	}
	hdr = http.Header{}
	for _, h := range t.Headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return ref, nil, exitcode.Usagef("--header %q: want 'Name: value'", redactHeaderArg(h))
		}
		if strings.ContainsAny(value, "\r\n") {
			return ref, nil, exitcode.Usagef("--header %s: value must not contain a line break", name)
		}
		hdr.Add(name, strings.TrimSpace(value))
		ref.HeaderNames = append(ref.HeaderNames, http.CanonicalHeaderKey(name))
	}
	if t.BearerEnv != "" {
		tok := getenv(t.BearerEnv)
		if tok == "" {
			return ref, nil, exitcode.Usagef("--bearer-env %s: that environment variable is empty or unset", t.BearerEnv)
		}
		hdr.Set("Authorization", "Bearer "+tok)
		ref.BearerEnv = t.BearerEnv
	}
	if ref.Argv != nil && len(hdr) > 0 {
		return ref, nil, exitcode.Usagef("--header and --bearer-env apply to --server only, not --stdio")
	}
	return ref, hdr, nil
}

// redactHeaderArg keeps the name of a malformed --header argument and hides the rest.
func redactHeaderArg(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok {
		return name + ": [redacted]"
	}
	if len(h) > 3 {
		return h[:3] + "…"
	}
	return h
}

// SplitCommand splits a --stdio command line the way a POSIX shell would split words: single
// quotes, double quotes and backslash escapes, no expansion.
func SplitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// CredentialFingerprint is a one-way digest of the header values sent to a server (the
// bearer token, --header values): it tells credentials apart without keeping any of them.
func CredentialFingerprint(hdr http.Header) string {
	if len(hdr) == 0 {
		return "none"
	}
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		for _, v := range hdr.Values(k) {
			fmt.Fprintf(h, "%s\x00%s\x00", k, v)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
