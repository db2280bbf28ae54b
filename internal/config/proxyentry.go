package config

// Rewriting a host's entry to go through `mcptask proxy` (proxy --print-config NAME).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/shellquote"
)

// ProxyEntryOptions say how the host will start or reach the proxy.
type ProxyEntryOptions struct {
	// Listen is the HOST:PORT the proxy will serve an HTTP server on; an HTTP server's entry
	// needs it, unless HostStdio.
	Listen string
	// HostStdio rewrites an HTTP server's entry for a stdio-only host: the host starts
	// `mcptask proxy --host-stdio`, which reaches the server.
	HostStdio bool
	// Args are the proxy flags to carry into the entry's command line (--no-ledger, the bridge
	// flags, --record FILE, …), paths made absolute by the caller.
	Args []string
	// Self is how the host should start mcptask (SelfCommand).
	Self string
}

// ProxyEntry is a server's entry rewritten to go through the proxy.
type ProxyEntry struct {
	// Doc is the config file fragment to print: {"mcpServers": {NAME: entry}}. The entry keeps
	// the fields of the file mcptask does not know (cwd, type, …).
	Doc map[string]any
	// Notes are for the person (stderr): the proxy command to run for an HTTP server, the
	// headers that were left out of a --host-stdio entry.
	Notes []string
}

// ProxyEntry rewrites the entry of server name so that the host goes through the proxy: a
// stdio entry runs `mcptask proxy --stdio 'command args'`; an HTTP entry points at
// o.Listen, where the user runs the proxy (Notes say how), or with o.HostStdio runs
// `mcptask proxy --host-stdio --server URL`. Problems the user fixes are UsageErrors.
func (set *Set) ProxyEntry(name string, o ProxyEntryOptions) (*ProxyEntry, error) {
	src, _ := set.Lookup(name)
	if src == nil {
		return nil, exitcode.Usagef("--print-config %q: no server of that name in the config files; 'mcptask servers' lists them", name)
	}
	if src.Scope == Project && !src.Trusted {
		// The entry a host would be given is the project's: it is reviewed and trusted first,
		// as for every other use of it.
		return nil, &UntrustedError{Server: *src}
	}
	// The entry as the file has it, so that fields mcptask does not know (cwd, type, …) stay.
	var entry map[string]any
	if err := json.Unmarshal(src.Raw, &entry); err != nil || entry == nil {
		return nil, fmt.Errorf("config file %s: server %q is not a JSON object", src.Source, name)
	}
	out := &ProxyEntry{Doc: map[string]any{"mcpServers": map[string]any{name: entry}}}
	switch {
	case src.URL != "" && o.HostStdio:
		if _, ok := entry["headers"]; ok {
			out.Notes = append(out.Notes, fmt.Sprintf("the headers of %q are not copied into the entry (they may hold secrets): give a token with --bearer-env VAR, or let mcptask log in with OAuth (mcptask auth login --server %s)", name, src.URL))
		}
		for _, k := range []string{"url", "headers", "serverUrl"} {
			delete(entry, k)
		}
		if _, ok := entry["type"]; ok {
			entry["type"] = "stdio"
		}
		entry["command"] = o.Self
		entry["args"] = append(append([]string{"proxy", "--host-stdio"}, o.Args...), "--server", src.URL)
	case src.URL != "":
		if o.Listen == "" {
			return nil, exitcode.Usagef("server %q is an HTTP server: give --listen 127.0.0.1:PORT, the address the proxy will serve it on", name)
		}
		entry["url"] = "http://" + o.Listen + "/mcp"
		// The host's headers pass through the proxy unchanged, so they stay in the entry.
		run := append([]string{"mcptask", "proxy", "--server", name, "--listen", o.Listen}, o.Args...)
		out.Notes = append(out.Notes, "run the proxy with: "+shellquote.Join(run))
	case src.Command == "":
		return nil, exitcode.Usagef("server %q in %s has neither url nor command", name, src.Source)
	default:
		entry["command"] = o.Self
		entry["args"] = append(append([]string{"proxy"}, o.Args...), "--stdio", shellquote.Join(append([]string{src.Command}, src.Args...)))
	}
	return out, nil
}

// SelfCommand is how a host should start this mcptask: "mcptask" when that is what PATH finds,
// else the absolute path of the running binary (desktop apps often have a short PATH).
func SelfCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "mcptask"
	}
	if p, err := exec.LookPath("mcptask"); err == nil {
		if a, err := filepath.EvalSymlinks(p); err == nil {
			if b, err := filepath.EvalSymlinks(self); err == nil && a == b {
				return "mcptask"
			}
		}
	}
	return self
}
