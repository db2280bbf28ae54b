package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/connect"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// AuthOptions are the global OAuth flags (the settings themselves are connect.AuthOptions).
// Each has its MCPTASK_* variable (applyEnv); Scopes come from a named server's "oauth"
// settings (or auth login --scopes), Interactive is decided per connection (connectOptions).
type AuthOptions struct {
	connect.AuthOptions
}

func (a *AuthOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&a.Login, "login", auth.LoginAuto, "OAuth login on a 401: auto (inline, only at a terminal or with --browser follow) or never (stored credentials only; otherwise exit 7)")
	fs.StringVar(&a.Browser, "browser", auth.BrowserOpen, "how to visit the OAuth authorization URL: open (the system browser), print (show the URL) or follow (request it and follow its redirects, keeping its cookies for that login only, for servers that approve without a page)")
	fs.StringVar(&a.ClientID, "client-id", "", "OAuth client id registered for mcptask at the server's authorization server")
	fs.StringVar(&a.ClientSecretEnv, "client-secret-env", "", "read the OAuth client secret from environment variable `VAR`")
	fs.StringVar(&a.ClientMetadataURL, "client-metadata-url", "", "OAuth client id as a Client ID Metadata Document `URL`, used where the authorization server supports them")
	fs.IntVar(&a.CallbackPort, "callback-port", 0, "loopback `PORT` for the OAuth redirect (default: a free port on 127.0.0.1)")
	fs.StringVar(&a.Store, "auth-store", auth.StoreAuto, "where OAuth credentials live: auto (the OS keychain, else a 0600 file), keyring or file")
	fs.StringVar(&a.Profile, "profile", "", "OAuth credential profile `NAME`: several accounts on one server")
	fs.StringVar(&a.Grant, "grant", "", "OAuth grant: client-credentials for machines (with --client-id and --client-secret-env or --client-key-file)")
	fs.StringVar(&a.ClientKeyFile, "client-key-file", "", "PEM private key `FILE` for private_key_jwt client authentication (--grant client-credentials)")
	fs.StringVar(&a.Issuer, "issuer", "", "issuer `URL` of the authorization server --client-id is registered at; its secret or key is sent only there, and a server naming another is refused (exit 7)")
}

func (a *AuthOptions) validate() error {
	switch a.Login {
	case auth.LoginAuto, auth.LoginNever:
	default:
		return flagErrorf("--login %q: want auto or never", a.Login)
	}
	switch a.Browser {
	case auth.BrowserOpen, auth.BrowserPrint, auth.BrowserFollow:
	default:
		return flagErrorf("--browser %q: want open, print or follow", a.Browser)
	}
	switch a.Store {
	case auth.StoreAuto, auth.StoreKeyring, auth.StoreFile:
	default:
		return flagErrorf("--auth-store %q: want auto, keyring or file", a.Store)
	}
	switch a.Grant {
	case "", "authorization-code":
	case "client-credentials":
		if a.ClientID == "" {
			return flagErrorf("--grant client-credentials needs --client-id")
		}
		if a.ClientSecretEnv == "" && a.ClientKeyFile == "" {
			return flagErrorf("--grant client-credentials needs --client-secret-env VAR or --client-key-file FILE")
		}
	default:
		return flagErrorf("--grant %q: want client-credentials (or leave it unset for a browser login)", a.Grant)
	}
	if a.CallbackPort < 0 || a.CallbackPort > 65535 {
		return flagErrorf("--callback-port %d is not a port", a.CallbackPort)
	}
	if a.ClientMetadataURL != "" && !strings.HasPrefix(a.ClientMetadataURL, "https://") {
		return flagErrorf("--client-metadata-url %q: a Client ID Metadata Document URL is https://", a.ClientMetadataURL)
	}
	if a.Issuer != "" && !auth.ValidIssuer(a.Issuer) {
		return flagErrorf("--issuer %q: an issuer is an https:// URL (http:// only on a loopback address), as the authorization server's metadata states it", a.Issuer)
	}
	return nil
}

// checkAuthFlags validates the OAuth flags before anything is sent: values, the secret's
// variable, the key file.
func (f *Factory) checkAuthFlags() error {
	a := &f.Global.Auth
	if err := a.validate(); err != nil {
		return err
	}
	if a.ClientSecretEnv != "" && f.Getenv(a.ClientSecretEnv) == "" {
		return flagErrorf("--client-secret-env %s: that environment variable is empty or unset", a.ClientSecretEnv)
	}
	if a.ClientKeyFile != "" {
		data, err := os.ReadFile(a.ClientKeyFile)
		if err != nil {
			return flagErrorf("--client-key-file: %v", err)
		}
		if _, err := auth.ParseClientKey(data); err != nil {
			return flagErrorf("--client-key-file %s: %v", a.ClientKeyFile, err)
		}
	}
	return nil
}

// authReason is the --json error's "reason" for an authorization failure.
func authReason(err error) string {
	if r := auth.ReasonOf(err); r != "" {
		return string(r)
	}
	var he *rpc.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		return string(auth.ReasonLoginRequired)
	}
	return ""
}

// NewCmdAuth returns `mcptask auth` and its login, status and logout commands.
func NewCmdAuth(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth <command>",
		Short: "Log in to MCP servers that require OAuth, and manage the stored credentials",
		Long: `Servers that follow MCP's authorization spec answer 401 until the client logs in with
OAuth 2.1. mcptask does that inline when a person is at the terminal, or ahead of time
with 'mcptask auth login'. Credentials live in the OS keychain when one answers, else in
a 0600 file under $XDG_STATE_HOME/mcptask/auth; they are refreshed quietly and never
written to the task ledger. CI jobs use --grant client-credentials, or --login never with
credentials stored earlier.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newCmdAuthLogin(f), newCmdAuthStatus(f), newCmdAuthLogout(f))
	return cmd
}

func newCmdAuthLogin(f *Factory) *cobra.Command {
	var scopes string
	cmd := &cobra.Command{
		Use:   "login --server URL|NAME [--scopes 'a b']",
		Short: "Log in to a server now and store the credential",
		Example: `  mcptask auth login --server https://mcp.example.com/mcp
  mcptask auth login --server work --profile alice --scopes 'files:read files:write'
  mcptask auth login --server https://mcp.example.com/mcp --browser print   # over SSH`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ref, _, err := f.serverRef()
			if err != nil {
				return err
			}
			if ref.URL == "" {
				return flagErrorf("auth login needs --server URL: a stdio server takes its credentials from its environment")
			}
			if scopes != "" {
				f.Global.Auth.Scopes = strings.Fields(scopes)
			}
			s, err := f.authSession(ref)
			if err != nil {
				return err
			}
			s.ForceLogin()
			cred, err := s.Login(c.Context())
			if err != nil {
				return err
			}
			e := statusOf(f, cred, backendOf(f, cred))
			if p := f.printer(); p.JSON() {
				return p.Print(output.AuthLogin{Type: "auth-login", Credential: e}, nil)
			}
			fmt.Fprintf(f.IO.ErrOut, "Logged in to %s\n", ref)
			printStatus(f, []authStatus{e})
			return nil
		},
	}
	cmd.Flags().StringVar(&scopes, "scopes", "", "scopes to ask for, space-separated (default: what the server asks for)")
	return cmd
}

// authStatus is what `auth status` shows of one credential: never a secret.
type authStatus struct {
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

func statusOf(f *Factory, c *auth.Credential, backend string) authStatus {
	return authStatus{Server: c.ServerURL, Resource: c.Resource, Issuer: c.Issuer, Profile: c.Profile, Grant: c.Grant,
		Registration: c.Client.Registration, ClientID: c.Client.ID, Scopes: append([]string{}, c.Scopes...),
		ExpiresAt: c.ExpiresAt, HasRefresh: c.RefreshToken != "", Usable: c.Usable(f.Now()), Refreshable: c.Refreshable(), Store: backend}
}

func backendOf(f *Factory, c *auth.Credential) string {
	env, err := f.authEnvironment()
	if err != nil {
		return ""
	}
	entries, _ := env.Store.List()
	for _, e := range entries {
		if e.Key == c.Key() {
			return e.Backend
		}
	}
	return ""
}

func printStatus(f *Factory, list []authStatus) {
	tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
	for i, e := range list {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		state := "usable"
		switch {
		case !e.Usable && e.Refreshable:
			state = "expired, refreshable"
		case !e.Usable:
			state = "expired; log in again"
		}
		fmt.Fprintf(tw, "Server:\t%s\n", termsafe.Line(e.Server))
		if e.Profile != "" {
			fmt.Fprintf(tw, "Profile:\t%s\n", termsafe.Line(e.Profile))
		}
		fmt.Fprintf(tw, "Issuer:\t%s\n", termsafe.Line(e.Issuer))
		fmt.Fprintf(tw, "Client:\t%s (%s)\n", termsafe.Line(e.ClientID), e.Registration)
		fmt.Fprintf(tw, "Scopes:\t%s\n", termsafe.Line(strings.Join(e.Scopes, " ")))
		if !e.ExpiresAt.IsZero() {
			fmt.Fprintf(tw, "Expires:\t%s (%s)\n", e.ExpiresAt.Local().Format(time.RFC3339), untilText(e.ExpiresAt.Sub(f.Now())))
		}
		fmt.Fprintf(tw, "Refresh token:\t%s\n", yesNo(e.HasRefresh))
		fmt.Fprintf(tw, "State:\t%s\n", state)
		fmt.Fprintf(tw, "Stored in:\t%s\n", e.Store)
	}
	_ = tw.Flush()
}

func untilText(d time.Duration) string {
	if d < 0 {
		return human.Duration(-d) + " ago"
	}
	return "in " + human.Duration(d)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// storedCredentials lists the credentials `auth status` and `auth logout` act on: the
// server's (and profile's) when --server is given, else all.
func storedCredentials(f *Factory, all bool) ([]auth.IndexEntry, *auth.Store, error) {
	env, err := f.authEnvironment()
	if err != nil {
		return nil, nil, err
	}
	entries, err := env.Store.List()
	if err != nil {
		return nil, nil, err
	}
	if all || f.Global.Server == "" {
		return entries, env.Store, nil
	}
	var out []auth.IndexEntry
	for _, e := range entries {
		if (e.ServerURL == f.Global.Server || e.Resource == f.Global.Server) && e.Profile == f.Global.Auth.Profile {
			out = append(out, e)
		}
	}
	return out, env.Store, nil
}

func newCmdAuthStatus(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "status [--server URL|NAME]",
		Short: "Show the stored OAuth credentials (never a secret)",
		Long: `Show the stored OAuth credentials: issuer, how the client was registered, scopes,
expiry, whether a refresh token exists, and where it is stored. With --server, only that
server's (and --profile's). Exits 0 when every credential shown is usable or refreshable,
7 when one is not or there is none.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			entries, st, err := storedCredentials(f, false)
			if err != nil {
				return err
			}
			var list []authStatus
			ok := len(entries) > 0
			for _, e := range entries {
				cred, err := st.Get(e.Key)
				if err != nil || cred == nil {
					f.warnf("%s: %v", e.ServerURL, err)
					ok = false
					continue
				}
				s := statusOf(f, cred, e.Backend)
				ok = ok && (s.Usable || s.Refreshable)
				list = append(list, s)
			}
			if p := f.printer(); p.JSON() {
				if err := p.Print(output.AuthStatus{Type: "auth-status", Credentials: orEmpty(list)}, nil); err != nil {
					return err
				}
			} else if len(list) == 0 {
				what := "any server"
				if f.Global.Server != "" {
					what = f.Global.Server
				}
				fmt.Fprintf(f.IO.ErrOut, "not logged in to %s; run 'mcptask auth login --server URL'\n", what)
			} else {
				printStatus(f, list)
			}
			if !ok {
				return &ExitError{Code: ExitAuth, Silent: true}
			}
			return nil
		},
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func newCmdAuthLogout(f *Factory) *cobra.Command {
	var all, forget bool
	cmd := &cobra.Command{
		Use:   "logout --server URL|NAME | --all",
		Short: "Revoke and forget stored OAuth tokens",
		Long: `Log out of --server (and --profile), or of every server with --all: where the
authorization server offers token revocation (RFC 7009, revocation_endpoint in its
metadata), the refresh token is revoked there first, so that it stops working for anyone
who copied it; then the tokens are forgotten here, whether or not the revocation worked.
Each line says which happened. The client registration is kept, so the next login skips
registering again, unless --forget-client is given. A pre-registered client authenticates
the revocation as at the token endpoint (--client-id with --client-secret-env or
--client-key-file).`,
		Example: `  mcptask auth logout --server https://mcp.example.com/mcp
  mcptask auth logout --all --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !all && f.Global.Server == "" {
				return flagErrorf("give --server URL|NAME, or --all")
			}
			entries, st, err := storedCredentials(f, all)
			if err != nil {
				return err
			}
			env, err := f.authEnvironment()
			if err != nil {
				return err
			}
			results := []logoutResult{}
			p := f.printer()
			for _, e := range entries {
				res, err := logOut(c.Context(), f, env, st, e, forget)
				if err != nil {
					return fmt.Errorf("log out of %s: %w", e.ServerURL, err)
				}
				results = append(results, res)
				if !p.JSON() {
					fmt.Fprintf(f.IO.ErrOut, "Logged out of %s (%s): %s\n", termsafe.Line(e.ServerURL), termsafe.Line(e.Issuer), res.text())
				}
			}
			if p.JSON() {
				return p.Print(output.AuthLogout{Type: "auth-logout", Count: len(entries), Credentials: results}, nil)
			}
			if len(entries) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "no stored credentials to forget")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "forget the credentials of every server")
	cmd.Flags().BoolVar(&forget, "forget-client", false, "forget the client registration too")
	return cmd
}

// Revocation outcomes of a logout (the "revocation" of `auth logout --json`).
const (
	revocationRevoked     = "revoked"     // the authorization server confirmed it
	revocationUnsupported = "unsupported" // it offers no revocation endpoint
	revocationFailed      = "failed"      // it could not be asked, or refused
	revocationNone        = "none"        // no token was stored
)

// logoutResult is what `auth logout` did with one credential: never a secret.
type logoutResult struct {
	Server     string `json:"server"`
	Issuer     string `json:"issuer"`
	Profile    string `json:"profile,omitempty"`
	Revocation string `json:"revocation"`
	Error      string `json:"error,omitempty"`
}

func (r logoutResult) text() string {
	switch r.Revocation {
	case revocationRevoked:
		return "revoked at " + termsafe.Line(r.Issuer) + " and forgotten locally"
	case revocationUnsupported:
		return termsafe.Line(r.Issuer) + " offers no token revocation; forgotten locally"
	case revocationFailed:
		return "could not revoke: " + termsafe.Line(r.Error) + "; forgotten locally"
	}
	return "no tokens were stored"
}

// logOut revokes the tokens of one stored credential at its authorization server where it
// can (auth.Revoke), then forgets them, and the client registration too with forgetClient
// (a registration that is not dynamic is not worth keeping). It holds the credential's lock
// throughout, so that no other process rotates the refresh token in between.
func logOut(ctx context.Context, f *Factory, env *auth.Env, st *auth.Store, e auth.IndexEntry, forgetClient bool) (logoutResult, error) {
	res := logoutResult{Server: e.ServerURL, Issuer: e.Issuer, Profile: e.Profile, Revocation: revocationNone}
	unlock, err := st.Lock(ctx, e.Key)
	if err != nil {
		return res, err
	}
	defer unlock()
	cred, err := st.Get(e.Key)
	if err != nil {
		return res, err
	}
	if cred == nil {
		return res, st.Delete(e.Key)
	}
	if cred.RefreshToken != "" || cred.AccessToken != "" {
		_, err := auth.Revoke(ctx, env.HTTP, cred, revokeOptions(f, cred))
		switch {
		case err == nil:
			res.Revocation = revocationRevoked
		case errors.Is(err, auth.ErrNoRevocationEndpoint):
			res.Revocation = revocationUnsupported
		default:
			res.Revocation, res.Error = revocationFailed, err.Error()
		}
	}
	if forgetClient || cred.Client.Registration != auth.RegDynamic {
		return res, st.Delete(e.Key)
	}
	cred.DropTokens()
	return res, st.Put(cred)
}

// revokeOptions are the client secrets the revocation of cred may use: those of --client-id
// only, and only for a credential of that very client, so that a secret never goes to another
// client's authorization server.
func revokeOptions(f *Factory, cred *auth.Credential) auth.RevokeOptions {
	a := f.Global.Auth
	var o auth.RevokeOptions
	if cred.Client.Registration != auth.RegPreRegistered || a.ClientID == "" || a.ClientID != cred.Client.ID {
		return o
	}
	if a.ClientSecretEnv != "" {
		o.ClientSecret = f.Getenv(a.ClientSecretEnv)
	}
	if a.ClientKeyFile != "" {
		if data, err := os.ReadFile(a.ClientKeyFile); err == nil {
			o.ClientKey, _ = auth.ParseClientKey(data)
		}
	}
	return o
}
