package connect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cli/browser"
	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/rpc"
)

// AuthOptions are the OAuth settings of a run (the global OAuth flags, and a named server's
// "oauth" object where the flags leave a field unset).
type AuthOptions struct {
	Login             string
	Browser           string
	ClientID          string
	ClientSecretEnv   string
	ClientMetadataURL string
	CallbackPort      int
	Store             string
	Profile           string
	Grant             string
	ClientKeyFile     string
	// Issuer is the authorization server ClientID was registered at: its secret or key goes
	// there and nowhere else, and a server that names another is refused.
	Issuer string
	Scopes []string
	// Interactive says a person can log in at the browser now.
	Interactive bool
}

// Validate checks the values of the OAuth settings, before anything is sent: a exitcode.UsageError
// names the flag and what it wants.
func (a AuthOptions) Validate() error {
	switch a.Login {
	case auth.LoginAuto, auth.LoginNever:
	default:
		return exitcode.Usagef("--login %q: want auto or never", a.Login)
	}
	switch a.Browser {
	case auth.BrowserOpen, auth.BrowserPrint, auth.BrowserFollow:
	default:
		return exitcode.Usagef("--browser %q: want open, print or follow", a.Browser)
	}
	switch a.Store {
	case auth.StoreAuto, auth.StoreKeyring, auth.StoreFile:
	default:
		return exitcode.Usagef("--auth-store %q: want auto, keyring or file", a.Store)
	}
	if err := a.validateGrant(); err != nil {
		return err
	}
	if a.CallbackPort < 0 || a.CallbackPort > 65535 {
		return exitcode.Usagef("--callback-port %d is not a port", a.CallbackPort)
	}
	if a.ClientMetadataURL != "" && !strings.HasPrefix(a.ClientMetadataURL, "https://") {
		return exitcode.Usagef("--client-metadata-url %q: a Client ID Metadata Document URL is https://", a.ClientMetadataURL)
	}
	if a.Issuer != "" && !auth.ValidIssuer(a.Issuer) {
		return exitcode.Usagef("--issuer %q: an issuer is an https:// URL (http:// only on a loopback address), as the authorization server's metadata states it", a.Issuer)
	}
	return nil
}

// validateGrant checks --grant and what the client credentials grant needs with it.
func (a AuthOptions) validateGrant() error {
	switch a.Grant {
	case "", "authorization-code":
	case "client-credentials":
		if a.ClientID == "" {
			return exitcode.Usagef("--grant client-credentials needs --client-id")
		}
		if a.ClientSecretEnv == "" && a.ClientKeyFile == "" {
			return exitcode.Usagef("--grant client-credentials needs --client-secret-env VAR or --client-key-file FILE")
		}
	default:
		return exitcode.Usagef("--grant %q: want client-credentials (or leave it unset for a browser login)", a.Grant)
	}
	return nil
}

// Check is Validate, and then that the client secret's variable is set and the key file
// holds a key: everything about the OAuth settings that can fail before anything is sent.
func (a AuthOptions) Check(getenv func(string) string) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.ClientSecretEnv != "" && getenv(a.ClientSecretEnv) == "" {
		return exitcode.Usagef("--client-secret-env %s: that environment variable is empty or unset", a.ClientSecretEnv)
	}
	if a.ClientKeyFile != "" {
		data, err := os.ReadFile(a.ClientKeyFile)
		if err != nil {
			return exitcode.Usagef("--client-key-file: %v", err)
		}
		if _, err := auth.ParseClientKey(data); err != nil {
			return exitcode.Usagef("--client-key-file %s: %v", a.ClientKeyFile, err)
		}
	}
	return nil
}

// LogoutOptions are the options of a logout under these settings: forgetClient, and the
// pre-registered client they name with its secret and key read now. A key file that does not
// parse is no key: a revocation that needs it fails and says so, and the tokens are forgotten.
func (a AuthOptions) LogoutOptions(getenv func(string) string, forgetClient bool) auth.LogoutOptions {
	o := auth.LogoutOptions{ForgetClient: forgetClient, ClientID: a.ClientID}
	if a.ClientSecretEnv != "" {
		o.ClientSecret = getenv(a.ClientSecretEnv)
	}
	if a.ClientKeyFile != "" {
		if data, err := os.ReadFile(a.ClientKeyFile); err == nil {
			o.ClientKey, _ = auth.ParseClientKey(data)
		}
	}
	return o
}

// AuthDir is where credentials live when no keychain answers: under the state directory,
// beside (not inside) the ledger, whatever --state says.
func AuthDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "mcptask", "auth"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil || home == "" {
			return "", errors.New("no home directory to keep OAuth credentials in (set XDG_STATE_HOME)")
		}
	}
	return filepath.Join(home, ".local", "state", "mcptask", "auth"), nil
}

// AuthEnv builds, once, what every OAuth session of this run shares: the credential store
// and a traced HTTP client for the authorization servers.
func (c *Connector) AuthEnv() (*auth.Env, error) {
	if c.authEnv != nil {
		return c.authEnv, nil
	}
	dir, err := AuthDir(c.env.Getenv)
	if err != nil {
		return nil, err
	}
	// The --trace and --record sinks of the MCP traffic; the linter hooks TraceOptions adds
	// are for MCP messages, so they go to options nobody uses.
	trace, err := c.TraceOptions(Ref{}, &rpc.ClientOptions{})
	if err != nil {
		return nil, err
	}
	o := c.opts()
	open := c.env.OpenBrowser
	if open == nil {
		open = func(u string) error {
			browser.Stdout, browser.Stderr = c.env.Stderr(), c.env.Stderr()
			return browser.OpenURL(u)
		}
	}
	env := &auth.Env{
		Store: &auth.Store{Dir: dir, Mode: o.Auth.Store, Getenv: c.env.Getenv,
			Warn: func(msg string) { c.warnf("%s", msg) }},
		HTTP:        auth.NewHTTPClient(rpc.NewTraceTransport(rpc.NewPool(o.Insecure, 4), trace), 60*time.Second),
		Stderr:      c.env.Stderr(),
		Now:         c.env.Now,
		OpenBrowser: open,
	}
	if trace != nil {
		env.Note = func(msg string) { rpc.Note(trace, msg) }
	}
	c.authEnv = env
	return env, nil
}

// AuthSession returns the one OAuth session of ref's server (and profile) in this run, so
// that every connection to it shares one token and one refresh. scopes, when given (auth
// login --scopes), are asked for instead of the configured ones.
func (c *Connector) AuthSession(ref Ref, scopes ...string) (*auth.Session, error) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	a := c.opts().Auth
	profile, issuer := a.Profile, ""
	if ref.OAuth != nil {
		profile, issuer = ref.OAuth.Profile, ref.OAuth.Issuer
	}
	key := ref.URL + "\x00" + profile
	if ref.StoredLoginOnly {
		key += "\x00stored-only"
	}
	if s := c.authSessions[key]; s != nil {
		return s, nil
	}
	env, err := c.AuthEnv()
	if err != nil {
		return nil, err
	}
	cfg := auth.Config{
		ServerURL: ref.URL, Profile: profile, Issuer: issuer,
		Login: a.Login, Browser: a.Browser,
		Interactive:       a.Interactive,
		ClientID:          a.ClientID,
		ClientIssuer:      a.Issuer,
		ClientMetadataURL: a.ClientMetadataURL,
		CallbackPort:      a.CallbackPort,
		Scopes:            a.Scopes,
		StoredOnly:        ref.StoredLoginOnly,
	}
	if len(scopes) > 0 {
		cfg.Scopes = scopes
	}
	if ref.StoredLoginOnly {
		return c.newSession(key, cfg, env), nil
	}
	if a.ClientSecretEnv != "" {
		cfg.ClientSecret = c.env.Getenv(a.ClientSecretEnv)
		if cfg.ClientSecret == "" {
			return nil, exitcode.Usagef("--client-secret-env %s: that environment variable is empty or unset", a.ClientSecretEnv)
		}
	}
	if a.Grant == "client-credentials" {
		cfg.Grant = auth.GrantClientCredentials
	}
	if a.ClientKeyFile != "" {
		data, err := os.ReadFile(a.ClientKeyFile)
		if err != nil {
			return nil, exitcode.Usagef("--client-key-file: %v", err)
		}
		key, err := auth.ParseClientKey(data)
		if err != nil {
			return nil, exitcode.Usagef("--client-key-file %s: %v", a.ClientKeyFile, err)
		}
		cfg.ClientKey = key
	}
	return c.newSession(key, cfg, env), nil
}

// newSession makes and keeps the session of key; c.authMu is held.
func (c *Connector) newSession(key string, cfg auth.Config, env *auth.Env) *auth.Session {
	s := auth.NewSession(cfg, env)
	if c.authSessions == nil {
		c.authSessions = map[string]*auth.Session{}
	}
	c.authSessions[key] = s
	return s
}
