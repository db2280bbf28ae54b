package cmd

import (
	"github.com/mcptask/mcptask/internal/exitcode"
	"github.com/mcptask/mcptask/internal/usagetext"
)

// Help shows a command's own flags, then the global flags that apply to it, in groups, the
// way gh shows a command's flags and a short "inherited flags" block. Every global flag stays
// persistent: a script may pass any of them to any command, as it always could. Only what help
// and the generated reference show is chosen here (issue 21).

// flagGroups lists every global flag once, in the order help shows the groups. A global flag
// missing here is shown under "Other global flags" on every command (TestHelpGroupsEveryFlag
// asks for it to be placed).
var flagGroups = []usagetext.Group{
	{ID: "server", Title: "Server flags", Flags: []string{"server", "stdio", "config", "header", "bearer-env", "protocol", "insecure", "connect-timeout", "max-conns", "no-push"}},
	{ID: "auth", Title: "OAuth flags", Flags: []string{"login", "browser", "client-id", "client-secret-env", "issuer", "client-metadata-url", "callback-port", "auth-store", "profile", "grant", "client-key-file"},
		Brief: "--login, --browser, --profile and more, for servers that ask for a login: 'mcptask help auth'"},
	{ID: "output", Title: "Output flags", Flags: []string{"json", "trace", "record"}},
	{ID: "ledger", Title: "Ledger flags", Flags: []string{"state", "keep"}},
	{ID: "ci", Title: "CI flags", Flags: []string{"ci"}},
}

// globalsShown says which global flags each command's help shows, by the command's path
// below the root. A word is a group of flagGroups, or one flag as --name, or brief:ID for
// the group's one line instead of its flags. A command missing here shows every group
// (TestHelpGroupsEveryCommand asks for it to be placed). The OAuth flags are shown in full
// where logging in is the point (auth); elsewhere a login can happen on a 401, and one
// line points to 'mcptask help auth'.
var globalsShown = map[string]string{
	"call":          "server brief:auth output ledger ci",
	"get":           "server brief:auth output --state ci",
	"result":        "server brief:auth output ledger ci",
	"cancel":        "server brief:auth output ledger ci",
	"tools":         "server brief:auth output --state ci", // the metadata cache lives beside the ledger
	"list":          "server brief:auth output --state ci", // --server with --remote, or to pick a server's records
	"resume":        "server brief:auth output ledger ci",
	"watch":         "server brief:auth output ledger ci",
	"update":        "server brief:auth output --state ci",
	"forget":        "--json --state",
	"prune":         "--json --state",
	"adopt":         "--server --stdio --config --json --state",
	"servers":       "--config --json",
	"servers trust": "--config --json",
	// untrust forgets what trust kept, for the names of the config files.
	"servers untrust": "--config --json",
	"check":           "server brief:auth output ci",
	"proxy":           "--server --stdio --config --header --bearer-env --insecure --connect-timeout output --state",
	"demo":            "--protocol output ledger ci", // it runs 'mcptask call' against its own server
	"demo serve":      "",
	"auth":            "--server --config --insecure auth output",
	"auth login":      "--server --config --insecure auth output",
	"auth logout":     "--server --config --insecure auth output",
	"auth status":     "--server --config --profile --auth-store --json",
	"version":         "--json",
	"exit-codes":      "--json",
	"help":            "",
	"completion":      "",
}

// exitCodes lists the exit codes each command can return, by its path as in globalsShown;
// help shows them with their names (internal/exitcode). Every command can meet a usage
// error (2); one that waits for a server can be interrupted (130). TestMain holds it to
// what the tests see: an exit code a command returned in a test must be listed here
// (exitlog_test.go).
var exitCodes = map[string]string{
	"":                "0 2", // mcptask alone, --version, or an unknown command
	"call":            "0 1 2 3 4 5 6 7 8 124 130",
	"get":             "0 1 2 6 7 130",
	"result":          "0 1 2 3 4 5 6 7 8 124 130",
	"cancel":          "0 1 2 3 6 7 124 130",
	"tools":           "0 1 2 7 130",
	"list":            "0 1 2 7 124 130",
	"resume":          "0 1 2 3 4 5 6 7 8 124 130",
	"watch":           "0 1 2 3 4 5 6 7 8 124 130",
	"update":          "0 1 2 3 4 5 6 7 130",
	"forget":          "0 1 2 6",
	"prune":           "0 1 2",
	"adopt":           "0 1 2",
	"servers":         "0 1 2",
	"servers trust":   "0 1 2",
	"servers untrust": "0 1 2",
	"check":           "0 1 2 3 7 130",
	"proxy":           "0 1 2 130",
	"demo":            "0 1 2 130",
	"demo serve":      "0 1 2 130",
	"auth":            "0 2",
	"auth login":      "0 1 2 7 130",
	"auth logout":     "0 1 2",
	"auth status":     "0 1 2 7",
	"version":         "0 2",
	"exit-codes":      "0 2",
	"help":            "0 2",
	"completion":      "0 2",
}

// helpLayout is how help groups the global flags and lists the exit codes (internal/usagetext).
var helpLayout = usagetext.Layout{Groups: flagGroups, Shown: globalsShown, Exits: exitCodes, ExitName: exitcode.Name}
