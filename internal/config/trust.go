package config

import (
	"slices"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/state"
)

// ChooseProject picks the entries of the project's files called names, or, with all, every
// one of them (`mcptask servers trust|untrust`). A name no project file defines is a
// exitcode.UsageError, one that only the user's own files define says it needs no trust.
func (set *Set) ChooseProject(names []string, all bool) ([]Server, error) {
	var chosen []Server
	for _, name := range names {
		found, own := false, ""
		for _, s := range set.Servers {
			if s.Name != name {
				continue
			}
			if s.Scope != Project {
				own = s.Source
				continue
			}
			found = true
			chosen = append(chosen, s)
		}
		if !found && own != "" {
			return nil, exitcode.Usagef("server %q comes from your own config %s, not from a project file; it needs no trust", name, own)
		}
		if !found {
			return nil, exitcode.Usagef("no server %q in the project's config files (%s); 'mcptask servers' lists them", name, strings.Join(set.ProjectPaths(), ", "))
		}
	}
	if all {
		for _, s := range set.Servers {
			if s.Scope == Project {
				chosen = append(chosen, s)
			}
		}
	}
	return chosen, nil
}

// SetTrust writes to the user's trust list that servers are trusted in their present form
// (trust) or no longer trusted at all (!trust); now is when.
func SetTrust(getenv func(string) string, servers []Server, trust bool, now time.Time) error {
	tl, err := TrustList(getenv)
	if err != nil {
		return err
	}
	return tl.Update(func(list []state.TrustedServer) []state.TrustedServer {
		list = slices.DeleteFunc(list, func(t state.TrustedServer) bool {
			return slices.ContainsFunc(servers, func(s Server) bool { return s.Source == t.File && s.Name == t.Name })
		})
		if trust {
			for _, s := range servers {
				list = append(list, state.TrustedServer{File: s.Source, Name: s.Name, SHA256: s.Digest, TrustedAt: now})
			}
		}
		return list
	})
}

// Use is what --server name stands for: the entry used (nil when no file defines name), the
// project entries of that name it shadows (the user should hear of them), and the entry
// resolved, with the OAuth settings o leaves unset filled from an HTTP entry's "oauth" object.
// An untrusted entry is an UntrustedError; validIssuer checks an issuer URL.
func (set *Set) Use(name string, getenv func(string) string, o *OAuthSettings, validIssuer func(string) bool) (s *Server, ignored []Server, r Resolved, err error) {
	if s, ignored = set.Lookup(name); s == nil {
		return nil, nil, r, nil
	}
	if r, err = s.Resolve(getenv); err == nil && r.URL != "" {
		err = s.FillOAuth(o, getenv, validIssuer)
	}
	return s, ignored, r, err
}
