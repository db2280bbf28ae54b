package cmd

import (
	"bufio"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"
)

// The command examples of the README, the guide and every command's --help cannot rot: each
// mcptask command line in them must parse (TestDocExamplesParse), and the README's blocks
// marked runnable run against the demo server with the real binary (TestDocExamplesRun).
//
// A fenced ```sh block is runnable when the line before it is runMarker (an HTML comment,
// which GitHub does not show). It runs with `sh -e` in an empty directory, with mcptask on
// PATH, $URL naming a demo server, a ledger and state directory of its own, and $RUNNER_TEMP
// a scratch directory; `go run . ` at the start of a line stands for the mcptask binary.

const runMarker = "<!-- example: run -->"

// docExample is one fenced block of a document.
type docExample struct {
	where string // file:line
	lang  string
	code  string
	run   bool
}

// docFiles are the documents whose examples are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join("..", "README.md")}
	guide, err := filepath.Glob(filepath.Join("..", "docs", "guide", "*.md"))
	if err != nil || len(guide) == 0 {
		t.Fatalf("no guide pages in docs/guide: %v", err)
	}
	return append(files, guide...)
}

// fencedBlocks returns the fenced code blocks of a markdown file.
func fencedBlocks(t *testing.T, path string) []docExample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	var cur *docExample
	prev := ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docExample{where: filepath.Base(path) + ":" + strconv.Itoa(n), lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), run: strings.TrimSpace(prev) == runMarker}
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
		prev = line
	}
	if cur != nil {
		t.Fatalf("%s: a fenced block is never closed", cur.where)
	}
	return out
}

// ghExpr is a GitHub Actions expression, ${{ … }}, which a workflow fills in before the shell
// sees the line.
var ghExpr = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

// shellOf is the shell code of a block: sh blocks as they are, and the `run:` lines of a YAML
// workflow.
func shellOf(ex docExample) string {
	switch ex.lang {
	case "sh", "bash", "shell":
		return ex.code
	case "yaml", "yml":
		var b strings.Builder
		for _, line := range strings.Split(ex.code, "\n") {
			if _, cmd, ok := strings.Cut(line, "run: "); ok {
				b.WriteString(ghExpr.ReplaceAllString(cmd, "x") + "\n")
			}
		}
		return b.String()
	}
	return ""
}

// mcptaskLines parses shell code and returns the argument lists of every mcptask command in it,
// command substitutions included. A word the shell would expand ($URL, "$id", $(…)) becomes
// "x": only the command's shape is checked.
func mcptaskLines(code, where string) ([][]string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(code), where)
	if err != nil {
		return nil, err
	}
	var out [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 || wordText(ce.Args[0]) != "mcptask" {
			return true
		}
		var args []string
		for _, w := range ce.Args[1:] {
			args = append(args, wordText(w))
		}
		out = append(out, args)
		return true
	})
	return out, nil
}

// wordText is a shell word as the command receives it, with expansions replaced by "x".
func wordText(w *syntax.Word) string {
	var b strings.Builder
	var parts func(ps []syntax.WordPart)
	parts = func(ps []syntax.WordPart) {
		for _, p := range ps {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(strings.ReplaceAll(p.Value, "\\", ""))
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				parts(p.Parts)
			default:
				b.WriteString("x")
			}
		}
	}
	parts(w.Parts)
	return b.String()
}

// parseExample checks that args name a command of the tree, its flags exist and take the
// values given, and its arguments fit.
func parseExample(args []string) error {
	ios, _, _, _ := TestIO()
	root := NewCmdRoot(NewFactory(ios))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if c == root && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return &FlagError{Err: os.ErrNotExist}
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	if c.Flags().Changed("help") {
		return nil
	}
	return c.ValidateArgs(c.Flags().Args())
}

// Every mcptask command line in the README, the guide and the examples of --help parses: the
// command exists, its flags exist and take the values given, and its arguments fit.
func TestDocExamplesParse(t *testing.T) {
	type source struct{ where, code string }
	var sources []source
	for _, file := range docFiles(t) {
		for _, ex := range fencedBlocks(t, file) {
			if code := shellOf(ex); code != "" {
				sources = append(sources, source{ex.where, strings.ReplaceAll(code, "go run . ", "mcptask ")})
			}
		}
	}
	ios, _, _, _ := TestIO()
	walkCommands(NewCmdRoot(NewFactory(ios)), func(c *cobra.Command) {
		if c.Example != "" {
			sources = append(sources, source{c.CommandPath() + " --help", c.Example})
		}
	})
	// The check itself catches what rots: a renamed command, a removed flag, a bad value, a
	// missing argument.
	for _, bad := range [][]string{{"nosuch"}, {"call", "sleep", "--no-such-flag"}, {"call", "sleep", "--timeout", "soon"}, {"get"}, {"servers", "bogus"}} {
		if parseExample(bad) == nil {
			t.Errorf("mcptask %s parses", strings.Join(bad, " "))
		}
	}
	count := 0
	for _, s := range sources {
		lines, err := mcptaskLines(s.code, s.where)
		if err != nil {
			t.Errorf("%s: not shell: %v", s.where, err)
			continue
		}
		for _, args := range lines {
			count++
			if err := parseExample(args); err != nil {
				t.Errorf("%s: mcptask %s: %v", s.where, strings.Join(args, " "), err)
			}
		}
	}
	if count < 100 {
		t.Errorf("only %d mcptask command lines found in the docs; is the extraction broken?", count)
	}
}

// The runnable examples (the README's Try it and recipes, and any block of the guide marked
// so) run, unchanged, against the demo server with the real binary, and succeed.
func TestDocExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	bin := mcptaskBinary(t)
	srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })

	var runnable []docExample
	for _, file := range docFiles(t) {
		for _, ex := range fencedBlocks(t, file) {
			if ex.run {
				runnable = append(runnable, ex)
			}
		}
	}
	if len(runnable) < 6 {
		t.Fatalf("only %d runnable examples in the README (marked %s)", len(runnable), runMarker)
	}
	for _, ex := range runnable {
		t.Run(ex.where, func(t *testing.T) {
			if ex.lang != "sh" {
				t.Fatalf("a runnable block must be sh, not %q", ex.lang)
			}
			dir := t.TempDir()
			home := t.TempDir()
			script := filepath.Join(t.TempDir(), "example.sh")
			code := regexp.MustCompile(`(?m)^go run \. `).ReplaceAllString(ex.code, "mcptask ")
			if err := os.WriteFile(script, []byte(code), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-e", script)
			cmd.Dir = dir
			cmd.Env = []string{
				"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
				"HOME=" + home,
				"XDG_STATE_HOME=" + filepath.Join(home, "state"),
				"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
				"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
				"RUNNER_TEMP=" + t.TempDir(),
				"URL=" + hs.URL + "/mcp",
				"NO_COLOR=1",
				"TERM=dumb",
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n--- example\n%s--- output\n%s", ex.where, err, code, out)
			}
		})
	}
}
