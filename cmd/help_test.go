package cmd

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptask/mcptask/internal/usagetext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateHelp = flag.Bool("update-help", false, "rewrite testdata/help from the current help output")

// walkCommands calls fn for every command below root, hidden ones too.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	for _, sub := range c.Commands() {
		fn(sub)
		walkCommands(sub, fn)
	}
}

func helpRoot(t *testing.T) *cobra.Command {
	t.Helper()
	ios, _, _, _ := TestIO()
	root := NewCmdRoot(NewFactory(ios))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// Every global flag belongs to one help group, and every group names real flags: a new global
// flag must be placed (else it shows under "Other global flags" on every command).
func TestHelpGroupsEveryFlag(t *testing.T) {
	globals := helpRoot(t).PersistentFlags()
	placed := map[string]string{}
	for _, g := range flagGroups {
		for _, name := range g.Flags {
			if prev, ok := placed[name]; ok {
				t.Errorf("--%s is in the groups %s and %s", name, prev, g.ID)
			}
			placed[name] = g.ID
			if globals.Lookup(name) == nil {
				t.Errorf("group %s names --%s, which is not a global flag", g.ID, name)
			}
		}
	}
	globals.VisitAll(func(fl *pflag.Flag) {
		if _, ok := placed[fl.Name]; !ok {
			t.Errorf("global flag --%s is in no help group: add it to flagGroups in cmd/help.go", fl.Name)
		}
	})
}

// Every command says which global flags its help shows, and names only groups and flags that
// exist.
func TestHelpGroupsEveryCommand(t *testing.T) {
	root := helpRoot(t)
	groups := map[string]bool{}
	for _, g := range flagGroups {
		groups[g.ID] = true
	}
	seen := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) {
		p := usagetext.Path(c)
		if strings.HasPrefix(p, "completion ") {
			return // cobra's completion scripts share one entry
		}
		seen[p] = true
		if _, ok := globalsShown[p]; !ok {
			t.Errorf("command %q is not in globalsShown (cmd/help.go): say which global flags apply to it", p)
		}
	})
	for p, words := range globalsShown {
		if !seen[p] {
			t.Errorf("globalsShown names %q, which is no command", p)
		}
		for _, w := range strings.Fields(words) {
			if name, ok := strings.CutPrefix(w, "--"); ok {
				if root.PersistentFlags().Lookup(name) == nil {
					t.Errorf("globalsShown[%q] names --%s, which is not a global flag", p, name)
				}
			} else if !groups[strings.TrimPrefix(w, "brief:")] {
				t.Errorf("globalsShown[%q] names group %q, which does not exist", p, w)
			}
		}
	}
}

// Help hides no flag from the parser: every command still takes every global flag (a script
// passing --state or --json to any command keeps working), however little its help shows.
func TestGlobalFlagsStayAccepted(t *testing.T) {
	root := helpRoot(t)
	walkCommands(root, func(c *cobra.Command) {
		inherited := c.InheritedFlags()
		root.PersistentFlags().VisitAll(func(fl *pflag.Flag) {
			if inherited.Lookup(fl.Name) == nil && c.LocalFlags().Lookup(fl.Name) == nil {
				t.Errorf("%s no longer takes --%s", c.CommandPath(), fl.Name)
			}
		})
	})
	// A flag version's help leaves out is still parsed, and still works.
	state := filepath.Join(t.TempDir(), "tasks.json")
	r := runCLI(t, t.Context(), nil, "version", "--json", "--state", state, "--grant", "client-credentials", "--no-push", "--ci", "none")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, `"type":"version"`) {
		t.Fatalf("version with global flags its help omits: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, t.Context(), nil, "version", "--ci", "bogus"); r.Code != ExitUsage {
		t.Errorf("a bad --ci on version: exit %d, want %d (the flag is still read)", r.Code, ExitUsage)
	}
}

// Each command's help shows its own flags, then only the groups of global flags that apply to
// it: version and demo show no OAuth flags, servers no ledger flags, call all five groups.
func TestHelpShowsWhatApplies(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want, omit []string
	}{
		{[]string{"version", "--help"}, []string{"Output flags:", "--json"},
			[]string{"OAuth flags:", "Server flags:", "Ledger flags:", "CI flags:", "--grant", "--trace"}},
		{[]string{"demo", "--help"}, []string{"--seconds", "Output flags:", "Ledger flags:", "--protocol"},
			[]string{"OAuth flags:", "--client-id", "--server URL", "--stdio"}},
		{[]string{"servers", "--help"}, []string{"--config", "--json"},
			[]string{"Ledger flags:", "--state", "--keep", "OAuth flags:", "--header"}},
		{[]string{"call", "--help"}, []string{"--detach", "Server flags:", "OAuth flags:", "Output flags:", "Ledger flags:", "CI flags:"},
			[]string{"Global Flags:", "Run 'mcptask --help' for all global flags."}},
		{[]string{"--help"}, []string{"Server flags:", "OAuth flags:", "Output flags:", "Ledger flags:", "CI flags:", "--client-key-file"},
			[]string{"Global Flags:", "Other global flags:"}},
	} {
		r := runCLI(t, t.Context(), nil, c.args...)
		if r.Code != ExitOK {
			t.Fatalf("%v: exit %d %s", c.args, r.Code, r.Stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("%v: help lacks %q\n%s", c.args, w, r.Stdout)
			}
		}
		for _, o := range c.omit {
			if strings.Contains(r.Stdout, o) {
				t.Errorf("%v: help shows %q\n%s", c.args, o, r.Stdout)
			}
		}
	}
}

// The whole help of a few commands, as a newcomer reads it (testdata/help; refresh with
// go test ./cmd -run TestHelpGolden -update-help).
func TestHelpGolden(t *testing.T) {
	for _, name := range []string{"version", "demo", "servers", "auth status"} {
		args := append(strings.Fields(name), "--help")
		r := runCLI(t, t.Context(), nil, args...)
		if r.Code != ExitOK {
			t.Fatalf("%s: exit %d %s", name, r.Code, r.Stderr)
		}
		file := filepath.Join("..", "testdata", "help", strings.ReplaceAll(name, " ", "_")+".txt")
		if *updateHelp {
			if err := os.WriteFile(file, []byte(r.Stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (refresh with -update-help)", err)
		}
		if d := cmp.Diff(string(want), r.Stdout); d != "" {
			t.Errorf("mcptask %s --help (-want +got), refresh with -update-help:\n%s", name, d)
		}
	}
}

// helpAt is the help of args laid out for a terminal of width columns.
func helpAt(t *testing.T, width int, args ...string) string {
	t.Helper()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
	ios.SetSize(width, 40)
	if code := runOn(t, t.Context(), ios, nil, append(args, "--help")...); code != ExitOK {
		t.Fatalf("%v --help at %d columns: exit %d %s", args, width, code, errOut.String())
	}
	return out.String()
}

// `mcptask call --help` as a person reads it at a narrow (60), a normal (100) and a wide (140)
// terminal (testdata/help/call_W.txt; refresh with -update-help). They should see: what call
// does in a few lines, the usage and examples, call's own flags, then the server, output,
// ledger and CI flags, one line pointing to 'mcptask help auth' for the OAuth flags, and
// every exit code call can return; no line wider than the terminal, and at 100 columns
// about 60 lines in all.
func TestHelpGoldenWidths(t *testing.T) {
	for _, width := range []int{60, 100, 140} {
		got := helpAt(t, width, "call")
		for i, line := range strings.Split(got, "\n") {
			// An example is a command to copy, kept whole; everything else fits.
			if n := len([]rune(line)); n > width && !strings.HasPrefix(line, "  mcptask call ") && !strings.HasPrefix(line, "  id=$(") {
				t.Errorf("%d columns: line %d is %d wide: %q", width, i+1, n, line)
			}
		}
		if n := strings.Count(got, "\n"); width == 100 && n > 64 {
			t.Errorf("call --help at 100 columns is %d lines, want about 60", n)
		}
		for _, w := range []string{"Flags:\n      --answer", "Server flags:", "OAuth flags:\n  --login, --browser", "'mcptask help auth'", "Exit codes", "8 still_running"} {
			if !strings.Contains(got, w) {
				t.Errorf("%d columns: help lacks %q", width, w)
			}
		}
		file := filepath.Join("..", "testdata", "help", fmt.Sprintf("call_%d.txt", width))
		if *updateHelp {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (refresh with -update-help)", err)
		}
		if d := cmp.Diff(string(want), got); d != "" {
			t.Errorf("mcptask call --help at %d columns (-want +got), refresh with -update-help:\n%s", width, d)
		}
	}
}
