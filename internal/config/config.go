// Package config reads the named servers of the config files MCP hosts already use, so a
// server set up once for an editor or a desktop app works with mcptask by name
// (--server NAME):
//
//	{"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}}}}   stdio
//	{"mcpServers": {"NAME": {"url": "https://...", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}
//
// VS Code's .vscode/mcp.json uses "servers" for the same map. Header and env values may
// reference ${VAR}, so no secret has to be written in the file.
//
// A project's files come with the checkout, and a pull request can plant one (issue 20,
// class 6). So the files have three scopes: the one named with --config ($MCPTASK_CONFIG),
// which the user chose; the user's own files; and the project's (.mcp.json and
// .vscode/mcp.json in the working directory). A name is taken from the first scope that
// defines it, in that order: a project file cannot shadow a server the user configured. And
// a project entry is used only once the user trusted it (`mcptask servers trust`, kept in the
// state directory by file and digest of the entry): until then mcptask expands none of its
// ${VAR}s, starts none of its commands and sends nothing to its URL, as Claude Code asks
// before it uses a project's servers and VS Code restricts an untrusted workspace.
//
// The files are read once per run (Load); every command that needs a named server asks the
// Set it returned.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/state"
)

// Scope says whose a config file is.
type Scope int

const (
	Explicit Scope = iota // --config / $MCPTASK_CONFIG: named by the user
	User                  // the user's own config files
	Project               // the working directory's: may come from anyone
)

func (s Scope) String() string {
	return [...]string{"explicit", "user", "project"}[s]
}

// File is one config file and whose it is.
type File struct {
	Path  string
	Scope Scope
}

// Server is one entry of an mcpServers map.
type Server struct {
	Name    string
	Source  string
	Scope   Scope
	URL     string            `json:"url"`
	Type    string            `json:"type"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	// OAuth holds a server's OAuth settings the way MCP hosts write them.
	OAuth *OAuth `json:"oauth"`
	// Raw is the entry as the file has it, so that a rewrite keeps fields mcptask does not
	// know (cwd, type, …) without reading the file again.
	Raw json.RawMessage `json:"-"`
	// Digest is the SHA-256 of the entry as written (canonical JSON): what trusting it pins.
	Digest string
	// Trusted is set for entries of the user's files and --config, and for project entries
	// the user trusted in their present form.
	Trusted bool
	// ShadowedBy names the file whose entry of the same name wins over this one.
	ShadowedBy string
}

// OAuth is the "oauth" object of a named server: a pre-registered client (its secret
// through ${VAR}) and the issuer it is registered at, the scopes to ask for, a Client ID
// Metadata Document URL, a fixed callback port. Flags and MCPTASK_* variables win over it.
type OAuth struct {
	ClientID          string `json:"clientId"`
	ClientSecret      string `json:"clientSecret"`
	Scopes            any    `json:"scopes"`
	ClientMetadataURL string `json:"clientMetadataUrl"`
	CallbackPort      int    `json:"callbackPort"`
	// Issuer is the authorization server the client is registered at (--issuer).
	Issuer string `json:"issuer"`
}

// UntrustedError is the refusal to use a project entry the user has not trusted.
type UntrustedError struct{ Server Server }

func (e *UntrustedError) Error() string {
	s := e.Server
	return fmt.Sprintf("server %q is defined by the project file %s, which came with this directory and is not trusted: mcptask expands none of its ${VAR}s, starts none of its commands and sends nothing to it; review the entry, then trust it with: mcptask servers trust %s (or name the file with --config %s)",
		s.Name, s.Source, s.Name, s.Source)
}

// Files lists the files read, in the order names are taken: explicit (--config /
// $MCPTASK_CONFIG), mcptask's own config, Claude Desktop's, then the project's .mcp.json and
// .vscode/mcp.json in wd (none when wd is empty).
func Files(explicit string, getenv func(string) string, wd string) []File {
	var files []File
	explicitAbs := ""
	if explicit != "" {
		files = append(files, File{explicit, Explicit})
		explicitAbs, _ = filepath.Abs(explicit)
	}
	cfg := getenv("XDG_CONFIG_HOME")
	home := getenv("HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	if cfg != "" {
		files = append(files, File{filepath.Join(cfg, "mcptask", "config.json"), User},
			File{filepath.Join(cfg, "Claude", "claude_desktop_config.json"), User})
	}
	if home != "" {
		files = append(files, File{filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), User})
	}
	if wd != "" {
		for _, p := range []string{filepath.Join(wd, ".mcp.json"), filepath.Join(wd, ".vscode", "mcp.json")} {
			if p != explicitAbs { // named with --config: the user's choice, explicit
				files = append(files, File{p, Project})
			}
		}
	}
	return files
}

// Set is what one run read: the files looked at and every entry they hold.
type Set struct {
	Files []File
	// Servers holds every entry, in the order of Files: for each name the first is the one
	// used and the others carry ShadowedBy.
	Servers []Server
}

// Load reads every file that exists and returns every entry. A file that exists but does
// not parse is an error naming it: silently ignoring it would pick a different server.
// trusted returns the user's trust list; it is asked only when a project file exists, and
// when it fails (no state directory) every project entry is untrusted, which is safe.
func Load(files []File, trusted func() ([]state.TrustedServer, error)) (*Set, error) {
	set := &Set{Files: files}
	first := map[string]string{}
	var trust []state.TrustedServer
	trustLoaded := false
	for _, cf := range files {
		file := cf.Path
		data, err := os.ReadFile(file)
		if err != nil {
			if cf.Scope == Explicit {
				return nil, exitcode.Usagef("--config %s: %v", file, err)
			}
			continue
		}
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
			Servers    map[string]json.RawMessage `json:"servers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("config file %s is not valid JSON: %v", file, err)
		}
		if cf.Scope == Project && !trustLoaded {
			trustLoaded = true
			if trusted != nil {
				if trust, err = trusted(); err != nil {
					return nil, err
				}
			}
		}
		for _, m := range []map[string]json.RawMessage{doc.MCPServers, doc.Servers} {
			names := make([]string, 0, len(m))
			for n := range m {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				var s Server
				if err := json.Unmarshal(m[n], &s); err != nil {
					return nil, fmt.Errorf("config file %s: server %q: %v", file, n, err)
				}
				s.Name, s.Source, s.Scope, s.Raw = n, file, cf.Scope, m[n]
				s.Digest = EntryDigest(n, m[n])
				s.Trusted = cf.Scope != Project || state.Trusts(trust, file, n, s.Digest)
				if w, ok := first[n]; ok {
					s.ShadowedBy = w
				} else {
					first[n] = file
				}
				set.Servers = append(set.Servers, s)
			}
		}
	}
	return set, nil
}

// TrustList is the user's list of trusted project servers, in the state directory. Without a
// state directory there is none: never a relative path, which would be the project's own.
func TrustList(getenv func(string) string) (*state.TrustList, error) {
	dir, err := state.Dir(getenv)
	if err != nil {
		return nil, fmt.Errorf("no list of trusted project servers: %w", err)
	}
	return state.OpenTrustList(dir), nil
}

// Trusted is the loader of Load's trust list from the user's state directory: no state
// directory means no list, and so no trusted project entry.
func Trusted(getenv func(string) string) func() ([]state.TrustedServer, error) {
	return func() ([]state.TrustedServer, error) {
		tl, err := TrustList(getenv)
		if err != nil {
			return nil, nil
		}
		return tl.Load()
	}
}

// EntryDigest is the SHA-256 of a server entry in canonical form (keys sorted, no spaces),
// with its name: any change to what the entry runs or sends changes it.
func EntryDigest(name string, raw json.RawMessage) string {
	var v any
	canon := []byte(raw)
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil))
}

// Lookup returns the entry that name means (nil when no file defines it) and the project
// entries of the same name that it shadows, which the user should hear about.
func (set *Set) Lookup(name string) (use *Server, ignored []Server) {
	for i := range set.Servers {
		s := &set.Servers[i]
		if s.Name == name && s.ShadowedBy == "" {
			use = s
			break
		}
	}
	if use == nil {
		return nil, nil
	}
	for _, o := range set.Servers {
		if o.Name == name && o.ShadowedBy != "" && o.Scope == Project && use.Scope != Project {
			ignored = append(ignored, o)
		}
	}
	return use, ignored
}

// Entry returns the first entry called name, shadowed or not (nil when there is none).
func (set *Set) Entry(name string) *Server {
	for i := range set.Servers {
		if set.Servers[i].Name == name {
			return &set.Servers[i]
		}
	}
	return nil
}

// ProjectPaths are the project's config files, for messages.
func (set *Set) ProjectPaths() []string {
	var out []string
	for _, c := range set.Files {
		if c.Scope == Project {
			out = append(out, c.Path)
		}
	}
	return out
}

// Paths lists the files' paths, for messages.
func (set *Set) Paths() []string {
	out := make([]string, len(set.Files))
	for i, c := range set.Files {
		out[i] = c.Path
	}
	return out
}

// TrustLabel is the TRUST column of `mcptask servers`.
func (s Server) TrustLabel() string {
	switch {
	case s.ShadowedBy != "":
		return "shadowed"
	case s.Scope == Explicit:
		return "explicit"
	case s.Scope == User:
		return "user"
	case s.Trusted:
		return "trusted"
	}
	return "untrusted"
}

// Target is the short form of what the entry reaches: its URL or its command line.
func (s Server) Target() string {
	if s.URL != "" {
		return s.URL
	}
	return "stdio: " + strings.Join(append([]string{s.Command}, s.Args...), " ")
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// VarRefs lists the ${VAR}s s expands, in order: what an entry takes from the environment,
// shown before it is trusted (a header named X-Build whose value is ${AWS_SECRET_ACCESS_KEY}
// sends that secret).
func VarRefs(s string) []string {
	var out []string
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		out = append(out, "${"+m[1]+"}")
	}
	return out
}

// Expand replaces ${VAR} with the environment's value; an unset variable is a exitcode.UsageError
// naming it and where it was, rather than an empty header that fails later and mysteriously.
func Expand(s, where string, getenv func(string) string) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := varRef.FindStringSubmatch(m)[1]
		v := getenv(name)
		if v == "" && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", exitcode.Usagef("%s refers to ${%s}, which is empty or unset", where, missing)
	}
	return out, nil
}

// Resolved is what a trusted entry stands for, its ${VAR}s expanded: an HTTP server (URL and
// headers as 'Name: value', sorted by name) or a stdio command (Argv and Env as KEY=VALUE,
// sorted).
type Resolved struct {
	URL     string
	Headers []string
	Argv    []string
	Env     []string
}

// Resolve expands s. An untrusted entry is refused before any ${VAR} is read
// (UntrustedError).
func (s Server) Resolve(getenv func(string) string) (Resolved, error) {
	var r Resolved
	if !s.Trusted {
		return r, &UntrustedError{Server: s}
	}
	if s.URL != "" {
		r.URL = s.URL
		keys := make([]string, 0, len(s.Headers))
		for k := range s.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, err := Expand(s.Headers[k], fmt.Sprintf("header %s of server %q in %s", k, s.Name, s.Source), getenv)
			if err != nil {
				return r, err
			}
			r.Headers = append(r.Headers, k+": "+v)
		}
		return r, nil
	}
	if s.Command == "" {
		return r, exitcode.Usagef("server %q in %s has neither url nor command", s.Name, s.Source)
	}
	r.Argv = append([]string{s.Command}, s.Args...)
	for k, v := range s.Env {
		ev, err := Expand(v, fmt.Sprintf("env %s of server %q in %s", k, s.Name, s.Source), getenv)
		if err != nil {
			return r, err
		}
		r.Env = append(r.Env, k+"="+ev)
	}
	sort.Strings(r.Env)
	return r, nil
}

// OAuthSettings are the OAuth settings a named server can give: the flags' values. A field
// already set (by a flag or an MCPTASK_* variable) is left alone.
type OAuthSettings struct {
	ClientID          string
	ClientSecretEnv   string
	ClientMetadataURL string
	Issuer            string
	CallbackPort      int
	Scopes            []string
}

// FillOAuth fills the settings dst leaves unset from s's "oauth" object. A clientSecret must
// be a ${VAR} reference: the secret itself never sits in a config file. validIssuer checks
// an issuer URL (auth.ValidIssuer).
func (s Server) FillOAuth(dst *OAuthSettings, getenv func(string) string, validIssuer func(string) bool) error {
	o := s.OAuth
	if o == nil {
		return nil
	}
	where := fmt.Sprintf("oauth of server %q in %s", s.Name, s.Source)
	if dst.ClientID == "" && o.ClientID != "" {
		id, err := Expand(o.ClientID, where+" clientId", getenv)
		if err != nil {
			return err
		}
		dst.ClientID = id
		if dst.ClientSecretEnv == "" && o.ClientSecret != "" {
			m := varRef.FindStringSubmatch(o.ClientSecret)
			if m == nil || m[0] != o.ClientSecret {
				return exitcode.Usagef("%s: clientSecret must be a ${VAR} reference, not the secret itself", where)
			}
			dst.ClientSecretEnv = m[1]
		}
	}
	if dst.ClientMetadataURL == "" {
		dst.ClientMetadataURL = o.ClientMetadataURL
	}
	if dst.Issuer == "" && o.Issuer != "" {
		if validIssuer != nil && !validIssuer(o.Issuer) {
			return exitcode.Usagef("%s: issuer %q is not an https:// URL", where, o.Issuer)
		}
		dst.Issuer = o.Issuer
	}
	if dst.CallbackPort == 0 {
		dst.CallbackPort = o.CallbackPort
	}
	if len(dst.Scopes) == 0 {
		switch v := o.Scopes.(type) {
		case string:
			dst.Scopes = strings.Fields(v)
		case []any:
			for _, x := range v {
				if str, ok := x.(string); ok {
					dst.Scopes = append(dst.Scopes, str)
				}
			}
		}
	}
	return nil
}
