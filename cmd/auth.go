package cmd

import (
	"cmp"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptask/mcptask/internal/auth"
	"github.com/mcptask/mcptask/internal/human"
	"github.com/mcptask/mcptask/internal/output"
	"github.com/mcptask/mcptask/internal/termsafe"
	"github.com/spf13/cobra"
)

// authReason is the --json error's "reason" for an authorization failure.
func authReason(err error) string { return string(auth.ReportedReason(err)) }

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
credentials stored earlier.

The OAuth flags below work with every command that talks to a server ('mcptask help
auth' shows this page).`,
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
			s, err := f.connector().AuthSession(ref, strings.Fields(scopes)...)
			if err != nil {
				return connErr(err)
			}
			e, err := auth.LogIn(c.Context(), s)
			if err != nil {
				return err
			}
			if p := f.printer(); p.JSON() {
				return p.Print(output.AuthLogin{Type: "auth-login", Credential: e}, nil)
			}
			fmt.Fprintf(f.IO.ErrOut, "Logged in to %s\n", ref)
			printStatus(f, []auth.Status{e})
			return nil
		},
	}
	cmd.Flags().StringVar(&scopes, "scopes", "", "scopes to ask for, space-separated (default: what the server asks for)")
	return cmd
}

// printStatus writes credentials as `auth status` shows them: one block each, server words
// made safe for the terminal.
func printStatus(f *Factory, list []auth.Status) {
	tw := tabwriter.NewWriter(f.IO.Out, 2, 4, 2, ' ', 0)
	for i, e := range list {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "Server:\t%s\n", termsafe.Line(e.Server))
		if e.Profile != "" {
			fmt.Fprintf(tw, "Profile:\t%s\n", termsafe.Line(e.Profile))
		}
		fmt.Fprintf(tw, "Issuer:\t%s\n", termsafe.Line(e.Issuer))
		fmt.Fprintf(tw, "Client:\t%s (%s)\n", termsafe.Line(e.ClientID), e.Registration)
		fmt.Fprintf(tw, "Scopes:\t%s\n", termsafe.Line(strings.Join(e.Scopes, " ")))
		if !e.ExpiresAt.IsZero() {
			fmt.Fprintf(tw, "Expires:\t%s (%s)\n", e.ExpiresAt.Local().Format(time.RFC3339), human.Until(e.ExpiresAt.Sub(f.Now())))
		}
		fmt.Fprintf(tw, "Refresh token:\t%s\n", yesNo(e.HasRefresh))
		fmt.Fprintf(tw, "State:\t%s\n", e.State())
		fmt.Fprintf(tw, "Stored in:\t%s\n", e.Store)
	}
	_ = tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
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
			env, err := f.connector().AuthEnv()
			if err != nil {
				return err
			}
			r, err := auth.Statuses(env.Store, f.Global.Server, f.Global.Auth.Profile, f.Now())
			if err != nil {
				return err
			}
			for _, u := range r.Unreadable {
				f.warnf("%s: %v", u.Server, u.Err)
			}
			switch {
			case f.printer().JSON():
				if err := f.printer().Print(output.AuthStatus{Type: "auth-status", Credentials: r.Credentials}, nil); err != nil {
					return err
				}
			case len(r.Credentials) == 0:
				what := cmp.Or(f.Global.Server, "any server")
				fmt.Fprintf(f.IO.ErrOut, "not logged in to %s; run 'mcptask auth login --server URL'\n", what)
			default:
				printStatus(f, r.Credentials)
			}
			if !r.OK {
				return &ExitError{Code: ExitAuth, Silent: true}
			}
			return nil
		},
	}
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
			env, err := f.connector().AuthEnv()
			if err != nil {
				return err
			}
			server := f.Global.Server
			if all {
				server = ""
			}
			results, err := auth.LogOut(c.Context(), env, server, f.Global.Auth.Profile, f.Global.Auth.LogoutOptions(f.Getenv, forget))
			for _, r := range results {
				if !f.printer().JSON() { // each line says what happened, even when a later one failed
					fmt.Fprintf(f.IO.ErrOut, "Logged out of %s (%s): %s\n", termsafe.Line(r.Server), termsafe.Line(r.Issuer), logoutText(r))
				}
			}
			switch {
			case err != nil:
				return err
			case f.printer().JSON():
				return f.printer().Print(output.AuthLogout{Type: "auth-logout", Count: len(results), Credentials: results}, nil)
			case len(results) == 0:
				fmt.Fprintln(f.IO.ErrOut, "no stored credentials to forget")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "forget the credentials of every server")
	cmd.Flags().BoolVar(&forget, "forget-client", false, "forget the client registration too")
	return cmd
}

// logoutText says in words what a logout did with one credential.
func logoutText(r auth.LogoutResult) string {
	switch r.Revocation {
	case auth.RevocationRevoked:
		return "revoked at " + termsafe.Line(r.Issuer) + " and forgotten locally"
	case auth.RevocationUnsupported:
		return termsafe.Line(r.Issuer) + " offers no token revocation; forgotten locally"
	case auth.RevocationFailed:
		return "could not revoke: " + termsafe.Line(r.Error) + "; forgotten locally"
	}
	return "no tokens were stored"
}
