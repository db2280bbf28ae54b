package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Named servers come from the config files MCP hosts already use, so a server set up once for
// an editor or a desktop app works with mcptask by name (--server NAME):
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

// configScope says whose a config file is.
type configScope int

const (
	scopeExplicit configScope = iota // --config / $MCPTASK_CONFIG: named by the user
	scopeUser                        // the user's own config files
	scopeProject                     // the working directory's: may come from anyone
)

func (s configScope) String() string {
	return [...]string{"explicit", "user", "project"}[s]
}

// configFile is one config file and whose it is.
type configFile struct {
	Path  string
	Scope configScope
}

// namedServer is one entry of an mcpServers map.
type namedServer struct {
	Name    string
	Source  string
	Scope   configScope
	URL     string            `json:"url"`
	Type    string            `json:"type"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	// OAuth holds a server's OAuth settings the way MCP hosts write them.
	OAuth *namedOAuth `json:"oauth"`
	// Digest is the SHA-256 of the entry as written (canonical JSON): what trusting it pins.
	Digest string
	// Trusted is set for entries of the user's files and --config, and for project entries
	// the user trusted in their present form.
	Trusted bool
	// ShadowedBy names the file whose entry of the same name wins over this one.
	ShadowedBy string
}

// namedOAuth is the "oauth" object of a named server: a pre-registered client (its secret
// through ${VAR}) and the issuer it is registered at, the scopes to ask for, a Client ID
// Metadata Document URL, a fixed callback port. Flags and MCPTASK_* variables win over it.
type namedOAuth struct {
	ClientID          string `json:"clientId"`
	ClientSecret      string `json:"clientSecret"`
	Scopes            any    `json:"scopes"`
	ClientMetadataURL string `json:"clientMetadataUrl"`
	CallbackPort      int    `json:"callbackPort"`
	// Issuer is the authorization server the client is registered at (--issuer).
	Issuer string `json:"issuer"`
}

// configFiles lists the files read, in the order names are taken: --config / $MCPTASK_CONFIG,
// mcptask's own config, Claude Desktop's, then the project's .mcp.json and .vscode/mcp.json.
func (f *Factory) configFiles() []configFile {
	var files []configFile
	explicit := ""
	if p := f.Global.Config; p != "" {
		files = append(files, configFile{p, scopeExplicit})
		explicit, _ = filepath.Abs(p)
	}
	cfg := f.Getenv("XDG_CONFIG_HOME")
	home := f.Getenv("HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	if cfg != "" {
		files = append(files, configFile{filepath.Join(cfg, "mcptask", "config.json"), scopeUser},
			configFile{filepath.Join(cfg, "Claude", "claude_desktop_config.json"), scopeUser})
	}
	if home != "" {
		files = append(files, configFile{filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"), scopeUser})
	}
	if wd, err := os.Getwd(); err == nil {
		for _, p := range []string{filepath.Join(wd, ".mcp.json"), filepath.Join(wd, ".vscode", "mcp.json")} {
			if p != explicit { // named with --config: the user's choice, explicit
				files = append(files, configFile{p, scopeProject})
			}
		}
	}
	return files
}

// configPaths lists the files' paths, for messages.
func configPaths(files []configFile) []string {
	out := make([]string, len(files))
	for i, c := range files {
		out[i] = c.Path
	}
	return out
}

// loadServers reads every config file that exists and returns every entry, in the order of
// configFiles: for each name the first is the one used and the others carry ShadowedBy. A file
// that exists but does not parse is an error naming it: silently ignoring it would pick a
// different server.
func (f *Factory) loadServers() ([]namedServer, error) {
	var out []namedServer
	first := map[string]string{}
	var trust []state.TrustedServer
	trustLoaded := false
	for _, cf := range f.configFiles() {
		file := cf.Path
		data, err := os.ReadFile(file)
		if err != nil {
			if cf.Scope == scopeExplicit {
				return nil, flagErrorf("--config %s: %v", file, err)
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
		if cf.Scope == scopeProject && !trustLoaded {
			trustLoaded = true
			// Without a trust list every project entry is untrusted, which is safe.
			if tl, err := f.trustList(); err == nil {
				if trust, err = tl.Load(); err != nil {
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
				var s namedServer
				if err := json.Unmarshal(m[n], &s); err != nil {
					return nil, fmt.Errorf("config file %s: server %q: %v", file, n, err)
				}
				s.Name, s.Source, s.Scope = n, file, cf.Scope
				s.Digest = entryDigest(n, m[n])
				s.Trusted = cf.Scope != scopeProject || state.Trusts(trust, file, n, s.Digest)
				if w, ok := first[n]; ok {
					s.ShadowedBy = w
				} else {
					first[n] = file
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// entryDigest is the SHA-256 of a server entry in canonical form (keys sorted, no spaces), with
// its name: any change to what the entry runs or sends changes it.
func entryDigest(name string, raw json.RawMessage) string {
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

// trustList is the user's list of trusted project servers, in the state directory. Without a
// state directory there is none: never a relative path, which would be the project's own.
func (f *Factory) trustList() (*state.TrustList, error) {
	dir, err := state.Dir(f.Getenv)
	if err != nil {
		return nil, fmt.Errorf("no list of trusted project servers: %w", err)
	}
	return state.OpenTrustList(dir), nil
}

// errUntrustedServer is the refusal to use a project entry the user has not trusted.
func errUntrustedServer(s namedServer) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("server %q is defined by the project file %s, which came with this directory and is not trusted: mcptask expands none of its ${VAR}s, starts none of its commands and sends nothing to it; review the entry, then trust it with: mcptask servers trust %s (or name the file with --config %s)",
		s.Name, s.Source, s.Name, s.Source)}
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${VAR} with the environment's value; an unset variable is an error naming
// it, rather than an empty header that fails later and mysteriously.
func (f *Factory) expand(s, where string) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := varRef.FindStringSubmatch(m)[1]
		v := f.Getenv(name)
		if v == "" && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", flagErrorf("%s refers to ${%s}, which is empty or unset", where, missing)
	}
	return out, nil
}

// applyNamedServer turns --server NAME into the flags it stands for. A value that looks like
// a URL is left alone.
func (f *Factory) applyNamedServer() error {
	name := f.Global.Server
	if name == "" || strings.Contains(name, "://") {
		return nil
	}
	servers, err := f.loadServers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.Name != name {
			continue
		}
		if s.ShadowedBy != "" {
			continue
		}
		for _, o := range servers {
			if o.Name == name && o.ShadowedBy != "" && o.Scope == scopeProject && s.Scope != scopeProject {
				f.warnf("server %q in the project file %s is ignored: %s defines %q too, and your own config wins", name, o.Source, s.Source, name)
			}
		}
		if !s.Trusted {
			return errUntrustedServer(s)
		}
		if s.URL != "" {
			f.Global.Server = s.URL
			keys := make([]string, 0, len(s.Headers))
			for k := range s.Headers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v, err := f.expand(s.Headers[k], fmt.Sprintf("header %s of server %q in %s", k, name, s.Source))
				if err != nil {
					return err
				}
				f.Global.Headers = append(f.Global.Headers, k+": "+v)
			}
			return f.applyNamedOAuth(s)
		}
		if s.Command == "" {
			return flagErrorf("server %q in %s has neither url nor command", name, s.Source)
		}
		f.Global.Server = ""
		f.Global.Stdio = strings.Join(quoteAll(append([]string{s.Command}, s.Args...)), " ")
		for k, v := range s.Env {
			ev, err := f.expand(v, fmt.Sprintf("env %s of server %q in %s", k, name, s.Source))
			if err != nil {
				return err
			}
			f.Global.StdioEnv = append(f.Global.StdioEnv, k+"="+ev)
		}
		sort.Strings(f.Global.StdioEnv)
		return nil
	}
	return flagErrorf("--server %q is neither a URL nor a server named in a config file; 'mcptask servers' lists the names", name)
}

// applyEnv gives every global flag not set on the command line its MCPTASK_* variable
// (precedence: flag > environment > config file).
func (f *Factory) applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(fl *pflag.Flag) {
		if err != nil || fl.Changed || fl.Name == "help" || fl.Name == "version" {
			return
		}
		env := "MCPTASK_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		v := f.Getenv(env)
		if v == "" || fl.DefValue == v {
			return
		}
		if serr := fl.Value.Set(v); serr != nil {
			err = flagErrorf("$%s: %v", env, serr)
		}
	})
	return err
}

// trustLabel is the TRUST column of `mcptask servers`.
func (s namedServer) trustLabel() string {
	switch {
	case s.ShadowedBy != "":
		return "shadowed"
	case s.Scope == scopeExplicit:
		return "explicit"
	case s.Scope == scopeUser:
		return "user"
	case s.Trusted:
		return "trusted"
	}
	return "untrusted"
}

// target is the short form of what the entry reaches: its URL or its command line.
func (s namedServer) target() string {
	if s.URL != "" {
		return s.URL
	}
	return "stdio: " + strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// NewCmdServers returns `mcptask servers` and its trust and untrust commands.
func NewCmdServers(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "servers",
		Short: "List the named servers from MCP config files",
		Long: `List the servers named in the config files MCP hosts already use, with the file each
comes from and whether it is trusted. Use a name with --server NAME.

Files, in the order a name is taken: --config FILE ($MCPTASK_CONFIG); your own
$XDG_CONFIG_HOME/mcptask/config.json and Claude Desktop's claude_desktop_config.json;
then the project's ./.mcp.json and ./.vscode/mcp.json. A project file cannot shadow a
server your own config names (mcptask says so when the name is used).
Entries are {"url": …, "headers": {…}} for HTTP or {"command": …, "args": […], "env": {…}}
for stdio; header and env values may use ${VAR}, so no secret needs to be in the file.

A project file comes with the checkout, and anyone who can change the repository can
change it. Until you trust one of its servers ('mcptask servers trust NAME'), mcptask
expands none of that entry's ${VAR}s, starts none of its commands and sends nothing to
its URL. Trust is kept in $XDG_STATE_HOME/mcptask/trusted-servers.json for the file's
path and the entry's exact content: after an edit of the entry, trust it again. A file
named with --config is trusted as it is.

TRUST column: user or explicit (your own config or --config), trusted, untrusted,
shadowed (a file earlier in the order defines the name).`,
		Example: `  mcptask servers
  mcptask servers trust build-server && mcptask call build --server build-server
  mcptask servers untrust --all`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			servers, err := f.loadServers()
			if err != nil {
				return err
			}
			if f.Global.JSON {
				list := make([]map[string]any, 0, len(servers))
				for _, s := range servers {
					e := map[string]any{"name": s.Name, "source": s.Source, "scope": s.Scope.String(), "trust": s.trustLabel()}
					if s.URL != "" {
						e["url"] = s.URL
					} else {
						e["command"] = append([]string{s.Command}, s.Args...)
					}
					if s.ShadowedBy != "" {
						e["shadowedBy"] = s.ShadowedBy
					}
					list = append(list, e)
				}
				return writeJSON(f.IO.Out, map[string]any{"type": "servers", "servers": list})
			}
			if len(servers) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no named servers in:\n  "+strings.Join(configPaths(f.configFiles()), "\n  "))
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSERVER\tTRUST\tSOURCE")
			for _, s := range servers {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termsafe.Line(s.Name), termsafe.Line(truncate(s.target(), 60)), s.trustLabel(), termsafe.Line(s.Source))
			}
			return tw.Flush()
		},
	}
	c.AddCommand(newCmdServersTrust(f, true), newCmdServersTrust(f, false))
	return c
}

// newCmdServersTrust returns `mcptask servers trust` (trust) or `mcptask servers untrust`.
func newCmdServersTrust(f *Factory, trust bool) *cobra.Command {
	var all bool
	verb, short, long := "trust", "Trust servers of the project's config files", `Trust servers defined by the project's .mcp.json or .vscode/mcp.json, after reviewing
them: mcptask then expands their ${VAR}s, starts their commands and sends their
headers. What each entry runs or reaches is printed. Trust is kept for the file's path
and the entry's exact content; an edit of the entry needs trust again.

EXIT STATUS
  0 trusted; 2 a name is not a server of the project's files.`
	if !trust {
		verb, short, long = "untrust", "Take back the trust given to project servers", `Take back the trust given with 'mcptask servers trust' to servers of the project's
.mcp.json or .vscode/mcp.json in this directory.

EXIT STATUS
  0 done; 2 a name is not a server of the project's files.`
	}
	c := &cobra.Command{
		Use:     verb + " [NAME...|--all]",
		Short:   short,
		Long:    long,
		Example: "  mcptask servers " + verb + " build-server\n  mcptask servers " + verb + " --all",
		RunE: func(c *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return flagErrorf("give the names of the servers to %s, or --all", verb)
			}
			servers, err := f.loadServers()
			if err != nil {
				return err
			}
			var chosen []namedServer
			for _, name := range args {
				found, own := false, ""
				for _, s := range servers {
					if s.Name != name {
						continue
					}
					if s.Scope != scopeProject {
						own = s.Source
						continue
					}
					found = true
					chosen = append(chosen, s)
				}
				if !found && own != "" {
					return flagErrorf("server %q comes from your own config %s, not from a project file; it needs no trust", name, own)
				}
				if !found {
					return flagErrorf("no server %q in the project's config files (%s); 'mcptask servers' lists them", name, strings.Join(projectPaths(f), ", "))
				}
			}
			if all {
				for _, s := range servers {
					if s.Scope == scopeProject {
						chosen = append(chosen, s)
					}
				}
			}
			tl, err := f.trustList()
			if err != nil {
				return err
			}
			now := f.Now().UTC()
			err = tl.Update(func(list []state.TrustedServer) []state.TrustedServer {
				list = slices.DeleteFunc(list, func(t state.TrustedServer) bool {
					return slices.ContainsFunc(chosen, func(s namedServer) bool { return s.Source == t.File && s.Name == t.Name })
				})
				if trust {
					for _, s := range chosen {
						list = append(list, state.TrustedServer{File: s.Source, Name: s.Name, SHA256: s.Digest, TrustedAt: now})
					}
				}
				return list
			})
			if err != nil {
				return err
			}
			for _, s := range chosen {
				if !trust {
					fmt.Fprintf(f.IO.ErrOut, "untrusted server %q of %s\n", termsafe.Line(s.Name), termsafe.Line(s.Source))
					continue
				}
				fmt.Fprintf(f.IO.ErrOut, "trusted server %q of %s: %s", termsafe.Line(s.Name), termsafe.Line(s.Source), termsafe.Line(s.target()))
				if len(s.Headers) > 0 {
					fmt.Fprintf(f.IO.ErrOut, "; headers %s", termsafe.Line(strings.Join(sortedKeys(s.Headers), ", ")))
				}
				if len(s.Env) > 0 {
					fmt.Fprintf(f.IO.ErrOut, "; env %s", termsafe.Line(strings.Join(sortedKeys(s.Env), ", ")))
				}
				if s.ShadowedBy != "" {
					fmt.Fprintf(f.IO.ErrOut, " (but %s defines the name too, and wins)", s.ShadowedBy)
				}
				fmt.Fprintln(f.IO.ErrOut)
			}
			if len(chosen) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no servers in the project's config files")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every server of the project's config files in this directory")
	return c
}

// projectPaths are the project's config files, for messages.
func projectPaths(f *Factory) []string {
	var out []string
	for _, c := range f.configFiles() {
		if c.Scope == scopeProject {
			out = append(out, c.Path)
		}
	}
	return out
}

// completeTaskIDs offers the ledger's task ids (shell completion).
func completeTaskIDs(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		st, err := f.ledger()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		file, err := st.Load()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range file.Tasks {
			// The shell inserts what it is offered into the command line: an id that is not
			// plain visible ASCII (a ledger from elsewhere, an older mcptask) is not offered,
			// and the description is cleaned and cut.
			if rpc.CheckTaskID(r.TaskID) != nil || !strings.HasPrefix(r.TaskID, prefix) {
				continue
			}
			desc := termsafe.Line(termsafe.CutN(r.Tool+" on "+r.Server.Display()+" ("+r.Status+")", 200))
			out = append(out, r.TaskID+"\t"+desc)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// applyNamedOAuth fills the OAuth settings a named server carries into the flags the user
// left unset.
func (f *Factory) applyNamedOAuth(s namedServer) error {
	o := s.OAuth
	if o == nil {
		return nil
	}
	a := &f.Global.Auth
	where := fmt.Sprintf("oauth of server %q in %s", s.Name, s.Source)
	if a.ClientID == "" && o.ClientID != "" {
		id, err := f.expand(o.ClientID, where+" clientId")
		if err != nil {
			return err
		}
		a.ClientID = id
		if a.ClientSecretEnv == "" && o.ClientSecret != "" {
			m := varRef.FindStringSubmatch(o.ClientSecret)
			if m == nil || m[0] != o.ClientSecret {
				return flagErrorf("%s: clientSecret must be a ${VAR} reference, not the secret itself", where)
			}
			a.ClientSecretEnv = m[1]
		}
	}
	if a.ClientMetadataURL == "" {
		a.ClientMetadataURL = o.ClientMetadataURL
	}
	if a.Issuer == "" && o.Issuer != "" {
		if !auth.ValidIssuer(o.Issuer) {
			return flagErrorf("%s: issuer %q is not an https:// URL", where, o.Issuer)
		}
		a.Issuer = o.Issuer
	}
	if a.CallbackPort == 0 {
		a.CallbackPort = o.CallbackPort
	}
	if len(a.Scopes) == 0 {
		switch v := o.Scopes.(type) {
		case string:
			a.Scopes = strings.Fields(v)
		case []any:
			for _, x := range v {
				if str, ok := x.(string); ok {
					a.Scopes = append(a.Scopes, str)
				}
			}
		}
	}
	return nil
}
