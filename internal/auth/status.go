package auth

import (
	"context"
	"time"
)

// The use cases of `mcptask auth login` and `auth status` (issue 21): what a login or a look at
// the store does, tested here; the command only parses flags and prints.

// Status is what `mcptask auth status` shows of one stored credential, and `auth login` of the
// one it obtained: never a secret. Its JSON is the "credentials" of `auth status --json` and
// the "credential" of `auth login --json`; fields are only ever added.
type Status struct {
	Server       string    `json:"server"`
	Resource     string    `json:"resource"`
	Issuer       string    `json:"issuer"`
	Profile      string    `json:"profile,omitempty"`
	Grant        string    `json:"grant"`
	Registration string    `json:"registration"`
	ClientID     string    `json:"clientId"`
	Scopes       []string  `json:"scopes"`
	ExpiresAt    time.Time `json:"expiresAt,omitzero"`
	HasRefresh   bool      `json:"refreshToken"`
	Usable       bool      `json:"usable"`
	Refreshable  bool      `json:"refreshable"`
	Store        string    `json:"store"`
}

// State is the credential's standing in words: usable now, expired but refreshable without
// a person, or expired for good so that only a login helps.
func (s Status) State() string {
	switch {
	case s.Usable:
		return "usable"
	case s.Refreshable:
		return "expired, refreshable"
	}
	return "expired; log in again"
}

// StatusOf describes c, kept in backend (keyring or file), as it stands at now.
func StatusOf(c *Credential, backend string, now time.Time) Status {
	return Status{Server: c.ServerURL, Resource: c.Resource, Issuer: c.Issuer, Profile: c.Profile, Grant: c.Grant,
		Registration: c.Client.Registration, ClientID: c.Client.ID, Scopes: append([]string{}, c.Scopes...),
		ExpiresAt: c.ExpiresAt, HasRefresh: c.RefreshToken != "", Usable: c.Usable(now), Refreshable: c.Refreshable(), Store: backend}
}

// LogIn is `mcptask auth login`: an authorization now, whether or not a stored credential
// would do, through s (its server, profile, scopes and client), and the description of the
// credential it stored.
func LogIn(ctx context.Context, s *Session) (Status, error) {
	s.ForceLogin()
	cred, err := s.Login(ctx)
	if err != nil {
		return Status{}, err
	}
	return StatusOf(cred, s.env.Store.backendOf(cred.Key()), s.now()), nil
}

// backendOf is where the credential under key is kept, or "" when the index does not say.
func (s *Store) backendOf(key string) string {
	entries, _ := s.List()
	for _, e := range entries {
		if e.Key == key {
			return e.Backend
		}
	}
	return ""
}

// Select returns the index entries a command about server and profile means: those whose
// server URL or resource is server, with that very profile; every entry when server is "".
func (s *Store) Select(server, profile string) ([]IndexEntry, error) {
	entries, err := s.List()
	if err != nil || server == "" {
		return entries, err
	}
	var out []IndexEntry
	for _, e := range entries {
		if (e.ServerURL == server || e.Resource == server) && e.Profile == profile {
			out = append(out, e)
		}
	}
	return out, nil
}

// Unreadable is a credential the index lists that could not be read: Err says why (nil when
// the index lists one whose secret is gone).
type Unreadable struct {
	Server string
	Err    error
}

// StatusReport is what `mcptask auth status` found.
type StatusReport struct {
	// Credentials describe the credentials that could be read, in the index's order; never
	// nil, so that its JSON is a list.
	Credentials []Status
	// Unreadable are those that could not.
	Unreadable []Unreadable
	// OK says there was at least one credential, and every one could be read and is usable
	// or refreshable: the exit status of `auth status`.
	OK bool
}

// Statuses is `mcptask auth status`: the credentials of server and profile in st (all of
// them when server is ""), each described as it stands at now.
func Statuses(st *Store, server, profile string, now time.Time) (StatusReport, error) {
	entries, err := st.Select(server, profile)
	if err != nil {
		return StatusReport{}, err
	}
	r := StatusReport{Credentials: []Status{}, OK: len(entries) > 0}
	for _, e := range entries {
		cred, err := st.Get(e.Key)
		if err != nil || cred == nil {
			r.Unreadable = append(r.Unreadable, Unreadable{Server: e.ServerURL, Err: err})
			r.OK = false
			continue
		}
		s := StatusOf(cred, e.Backend, now)
		r.OK = r.OK && (s.Usable || s.Refreshable)
		r.Credentials = append(r.Credentials, s)
	}
	return r, nil
}
