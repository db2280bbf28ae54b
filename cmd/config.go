package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mcptask/mcptask/internal/rpc"
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
// reference ${VAR}, so no secret has to be written in the file. The first file that defines a
// name wins, in the order of configFiles.

// namedServer is one entry of an mcpServers map.
type namedServer struct {
	Name    string
	Source  string
	URL     string            `json:"url"`
	Type    string            `json:"type"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	// OAuth holds a server's OAuth settings the way MCP hosts write them.
	OAuth *namedOAuth `json:"oauth"`
}

// namedOAuth is the "oauth" object of a named server: a pre-registered client (its secret
// through ${VAR}), the scopes to ask for, a Client ID Metadata Document URL, a fixed
// callback port. Flags and MCPTASK_* variables win over it.
type namedOAuth struct {
	ClientID          string `json:"clientId"`
	ClientSecret      string `json:"clientSecret"`
	Scopes            any    `json:"scopes"`
	ClientMetadataURL string `json:"clientMetadataUrl"`
	CallbackPort      int    `json:"callbackPort"`
}

// configFiles lists the files read, most specific first: --config / $MCPTASK_CONFIG, the
// project's .mcp.json and .vscode/mcp.json, mcptask's own config, then Claude Desktop's.
func (f *Factory) configFiles() []string {
	var files []string
	if p := f.Global.Config; p != "" {
		files = append(files, p)
	}
	if wd, err := os.Getwd(); err == nil {
		files = append(files, filepath.Join(wd, ".mcp.json"), filepath.Join(wd, ".vscode", "mcp.json"))
	}
	cfg := f.Getenv("XDG_CONFIG_HOME")
	home := f.Getenv("HOME")
	if cfg == "" && home != "" {
		cfg = filepath.Join(home, ".config")
	}
	if cfg != "" {
		files = append(files, filepath.Join(cfg, "mcptask", "config.json"), filepath.Join(cfg, "Claude", "claude_desktop_config.json"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"))
	}
	return files
}

// loadServers reads every config file that exists. A file that exists but does not parse is
// an error naming it: silently ignoring it would pick a different server.
func (f *Factory) loadServers() ([]namedServer, error) {
	var out []namedServer
	seen := map[string]bool{}
	for _, file := range f.configFiles() {
		data, err := os.ReadFile(file)
		if err != nil {
			if f.Global.Config == file {
				return nil, flagErrorf("--config %s: %v", file, err)
			}
			continue
		}
		var doc struct {
			MCPServers map[string]namedServer `json:"mcpServers"`
			Servers    map[string]namedServer `json:"servers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("config file %s is not valid JSON: %v", file, err)
		}
		for _, m := range []map[string]namedServer{doc.MCPServers, doc.Servers} {
			names := make([]string, 0, len(m))
			for n := range m {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if seen[n] {
					continue
				}
				s := m[n]
				s.Name, s.Source = n, file
				seen[n] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
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

// NewCmdServers returns `mcptask servers`.
func NewCmdServers(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "servers",
		Short: "List the named servers from MCP config files",
		Long: `List the servers named in the config files MCP hosts already use, with the file each
comes from. Use a name with --server NAME.

Files, first match wins: --config FILE ($MCPTASK_CONFIG), ./.mcp.json, ./.vscode/mcp.json,
$XDG_CONFIG_HOME/mcptask/config.json, Claude Desktop's claude_desktop_config.json.
Entries are {"url": …, "headers": {…}} for HTTP or {"command": …, "args": […], "env": {…}}
for stdio; header and env values may use ${VAR}, so no secret needs to be in the file.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			servers, err := f.loadServers()
			if err != nil {
				return err
			}
			if f.Global.JSON {
				list := make([]map[string]any, 0, len(servers))
				for _, s := range servers {
					e := map[string]any{"name": s.Name, "source": s.Source}
					if s.URL != "" {
						e["url"] = s.URL
					} else {
						e["command"] = append([]string{s.Command}, s.Args...)
					}
					list = append(list, e)
				}
				return writeJSON(f.IO.Out, map[string]any{"type": "servers", "servers": list})
			}
			if len(servers) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no named servers in:\n  "+strings.Join(f.configFiles(), "\n  "))
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSERVER\tSOURCE")
			for _, s := range servers {
				target := s.URL
				if target == "" {
					target = "stdio: " + strings.Join(append([]string{s.Command}, s.Args...), " ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, truncate(target, 60), s.Source)
			}
			return tw.Flush()
		},
	}
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
