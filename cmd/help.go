package cmd

import "github.com/mcptask/mcptask/internal/usagetext"

// Help shows a command's own flags, then the global flags that apply to it, in groups, the
// way gh shows a command's flags and a short "inherited flags" block. Every global flag stays
// persistent: a script may pass any of them to any command, as it always could. Only what help
// and the generated reference show is chosen here (issue 21).

// flagGroups lists every global flag once, in the order help shows the groups. A global flag
// missing here is shown under "Other global flags" on every command (TestHelpGroupsEveryFlag
// asks for it to be placed).
var flagGroups = []usagetext.Group{
	{ID: "server", Title: "Server flags", Flags: []string{"server", "stdio", "config", "header", "bearer-env", "protocol", "insecure", "connect-timeout", "max-conns", "no-push"}},
	{ID: "auth", Title: "OAuth flags", Flags: []string{"login", "browser", "client-id", "client-secret-env", "issuer", "client-metadata-url", "callback-port", "auth-store", "profile", "grant", "client-key-file"}},
	{ID: "output", Title: "Output flags", Flags: []string{"json", "trace", "record"}},
	{ID: "ledger", Title: "Ledger flags", Flags: []string{"state", "keep"}},
	{ID: "ci", Title: "CI flags", Flags: []string{"ci"}},
}

// globalsShown says which global flags each command's help shows, by the command's path
// below the root. A word is a group of flagGroups, or one flag as --name. A command missing
// here shows every group (TestHelpGroupsEveryCommand asks for it to be placed).
var globalsShown = map[string]string{
	"call":          "server auth output ledger ci",
	"get":           "server auth output --state ci",
	"result":        "server auth output ledger ci",
	"cancel":        "server auth output ledger ci",
	"tools":         "server auth output --state ci", // the metadata cache lives beside the ledger
	"list":          "server auth output --state ci", // --server with --remote, or to pick a server's records
	"resume":        "server auth output ledger ci",
	"watch":         "server auth output ledger ci",
	"update":        "server auth output --state ci",
	"forget":        "--json --state",
	"prune":         "--json --state",
	"adopt":         "--server --stdio --config --json --state",
	"servers":       "--config --json",
	"servers trust": "--config --json",
	// untrust forgets what trust kept, for the names of the config files.
	"servers untrust": "--config --json",
	"check":           "server auth output ci",
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

// helpLayout is how help groups the global flags (internal/usage).
var helpLayout = usagetext.Layout{Groups: flagGroups, Shown: globalsShown}
