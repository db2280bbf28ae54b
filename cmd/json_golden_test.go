package cmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/demo/demotest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/json from the current --json output")

// goldenRun runs mcptask commands against one demo server and keeps what a script sees of
// each: the command, its exit code, stdout and the JSON lines of stderr, with what changes
// from run to run (ports, task ids, times, temporary paths, toolchain) normalised.
type goldenRun struct {
	t      *testing.T
	server string
	env    map[string]string
	out    bytes.Buffer
	ids    map[string]string // task id -> its placeholder
}

func (g *goldenRun) cli(args ...string) cliResult {
	g.t.Helper()
	r := runCLI(g.t, g.t.Context(), g.env, args...)
	fmt.Fprintf(&g.out, "$ mcptask %s\nexit %d\n", g.norm(strings.Join(args, " ")), r.Code)
	for _, l := range strings.SplitAfter(r.Stdout, "\n") {
		if l != "" {
			g.out.WriteString("stdout " + g.norm(g.taskOrder(l)))
		}
	}
	for _, l := range strings.SplitAfter(r.Stderr, "\n") {
		if strings.HasPrefix(l, "{") {
			g.out.WriteString("stderr " + g.norm(l))
		}
	}
	return r
}

// taskOrder checks that the tasks of a many-task document (watch, resume) are sorted by task
// id, as the contract says, and puts them in the order the test created them instead: task
// ids are random, so their sorted order changes from run to run. Only the order changes.
func (g *goldenRun) taskOrder(line string) string {
	var doc struct {
		Type  string            `json:"type"`
		Tasks []json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal([]byte(line), &doc) != nil || len(doc.Tasks) < 2 {
		return line
	}
	id := func(raw json.RawMessage) string {
		var e struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(raw, &e)
		return e.TaskID
	}
	sorted := slices.Clone(doc.Tasks)
	if doc.Type != "cancel" && !slices.IsSortedFunc(sorted, func(a, b json.RawMessage) int { return strings.Compare(id(a), id(b)) }) {
		g.t.Errorf("the tasks of a %s document are not sorted by task id: %s", doc.Type, line)
	}
	slices.SortStableFunc(sorted, func(a, b json.RawMessage) int {
		return strings.Compare(fmt.Sprintf("%9s", g.ids[id(a)]), fmt.Sprintf("%9s", g.ids[id(b)]))
	})
	join := func(l []json.RawMessage) string {
		parts := make([]string, len(l))
		for i, raw := range l {
			parts[i] = string(raw)
		}
		return strings.Join(parts, ",")
	}
	return strings.Replace(line, join(doc.Tasks), join(sorted), 1)
}

// id runs a command that prints one envelope and returns its taskId.
func (g *goldenRun) id(args ...string) string {
	g.t.Helper()
	r := g.cli(args...)
	id, _ := decodeJSON(g.t, r.Stdout)["taskId"].(string)
	if id == "" {
		g.t.Fatalf("mcptask %v: no taskId in %q (stderr %q)", args, r.Stdout, r.Stderr)
	}
	return id
}

var (
	goldenUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	goldenTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	goldenPort  = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	goldenMs    = regexp.MustCompile(`"(usedMs|durationMs|elapsedMs|ms|io.modelcontextprotocol/subscriptionId)":\d+`)
	goldenState = regexp.MustCompile(`"requestState":"[^"]*"`)
	goldenBuild = regexp.MustCompile(`"(revision|go|platform)":"[^"]*"`)
	goldenTemp  = regexp.MustCompile(`/[^"\s]*/TestJSONGolden[^/"\s]*/\d+`)
)

// norm replaces what differs between runs with stable placeholders; task ids become ID1, ID2…
// in the order they first appear, so a golden file still shows which task is which.
func (g *goldenRun) norm(s string) string {
	s = goldenUUID.ReplaceAllStringFunc(s, func(id string) string {
		if p, ok := g.ids[id]; ok {
			return p
		}
		p := fmt.Sprintf("ID%d", len(g.ids)+1)
		g.ids[id] = p
		return p
	})
	s = goldenTemp.ReplaceAllString(s, "TMP")
	s = goldenBuild.ReplaceAllString(s, `"$1":"X"`)
	s = goldenTime.ReplaceAllString(s, "TIME")
	s = goldenPort.ReplaceAllString(s, "127.0.0.1:PORT")
	s = goldenMs.ReplaceAllString(s, `"$1":0`)
	s = goldenState.ReplaceAllString(s, `"requestState":"STATE"`)
	return s
}

// jsonlKeys runs a --jsonl command and keeps, for each event line, its type and sorted keys,
// each once, in the order they came (sorted, with several tasks, whose events interleave).
func (g *goldenRun) jsonlKeys(args ...string) {
	g.t.Helper()
	r := runCLI(g.t, g.t.Context(), g.env, args...)
	fmt.Fprintf(&g.out, "$ mcptask %s\nexit %d\n", g.norm(strings.Join(args, " ")), r.Code)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			g.t.Fatalf("--jsonl line is not a JSON object: %v\n%s", err, l)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
		line := fmt.Sprintf("event %v %s\n", m["type"], strings.Join(keys, ","))
		if !slices.Contains(lines, line) { // status events repeat with the steps
			lines = append(lines, line)
		}
	}
	if slices.Contains(args, "watch") {
		slices.Sort(lines)
	}
	g.out.WriteString(strings.Join(lines, ""))
}

// ended waits until each task has ended, so that what a command then reads of it no longer
// depends on how far it had got.
func (g *goldenRun) ended(ids ...string) {
	for _, id := range ids {
		waitFor(g.t, "task "+id+" to end", 10*time.Second, func() bool {
			out := runCLI(g.t, g.t.Context(), g.env, "get", id, "--json").Stdout
			return !strings.Contains(out, `"status":"working"`) && !strings.Contains(out, `"status":"input_required"`)
		})
	}
}

// TestJSONGolden pins the --json and --jsonl contract of every command that has one: each
// command's output must match testdata/golden/json/NAME.golden byte for byte once volatile
// values are normalised. Run with -update to rewrite the files after an intended, additive
// change of the contract.
func TestJSONGolden(t *testing.T) {
	url, _ := demoServer(t, demo.Options{})
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			g := &goldenRun{t: t, server: url, ids: map[string]string{}, env: map[string]string{"MCPTASK_SERVER": ""}}
			tc.run(g)
			path := filepath.Join("testdata", "golden", "json", tc.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, g.out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run 'go test ./cmd -run TestJSONGolden -update' to create it)", err)
			}
			if got := g.out.String(); got != string(want) {
				t.Errorf("--json output of %s changed; if that is intended, run with -update.\n%s", tc.name, lineDiff(got, string(want)))
			}
		})
	}
}

var goldenCases = []struct {
	name string
	run  func(g *goldenRun)
}{
	{"version", func(g *goldenRun) {
		g.cli("version", "--json")
	}},
	{"exit-codes", func(g *goldenRun) { g.cli("exit-codes", "--json") }},
	{"call", func(g *goldenRun) {
		for _, era := range eras {
			g.cli("call", "echo", "--arg", "text=hi", "--server", g.server, "--protocol", era, "--json")
			g.cli("call", "sleep", "--arg", "seconds=1", "--server", g.server, "--protocol", era, "--json")
			g.cli("call", "tool_error", "--server", g.server, "--protocol", era, "--json")
			g.cli("call", "fail", "--server", g.server, "--protocol", era, "--json")
			g.cli("call", "ask", "--server", g.server, "--protocol", era, "--json", "--answer", "other={}")
		}
		g.cli("call", "confirm", "--server", g.server, "--protocol", "2026-07-28", "--json", "--answer", "other={}")
		g.cli("call", "nosuchtool", "--server", g.server, "--json")
	}},
	{"detach-get-result", func(g *goldenRun) {
		for _, era := range eras {
			id := g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--keep", "--server", g.server, "--protocol", era, "--json")
			g.cli("result", id, "--keep", "--json")
			g.cli("get", id, "--json")
		}
		g.cli("get", "no-such-task", "--json")
	}},
	{"detach-local", func(g *goldenRun) {
		// A plain result to --detach: kept under a local id, which result and get answer with
		// nothing sent; a question nobody answers: exit 5 and the questions, in both eras.
		for _, era := range eras {
			id := g.id("call", "echo", "--arg", "text=hi", "--detach", "--server", g.server, "--protocol", era, "--json")
			g.cli("result", id, "--json")
			g.cli("result", id, "--json")
			g.cli("get", id, "--json")
			g.cli("call", "ask", "--server", g.server, "--protocol", era, "--json")
		}
	}},
	{"list", func(g *goldenRun) {
		g.cli("list", "--json")
		g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--server", g.server, "--json")
		g.cli("list", "--json")
		g.cli("list", "--all", "--json")
		g.cli("list", "--remote", "--server", g.server, "--protocol", "2025-11-25", "--json")
	}},
	{"tools", func(g *goldenRun) {
		for _, era := range eras {
			g.cli("tools", "--server", g.server, "--protocol", era, "--json")
		}
	}},
	{"tool", func(g *goldenRun) {
		for _, era := range eras {
			g.cli("tools", "sleep", "--server", g.server, "--protocol", era, "--json")
			g.cli("tools", "echo", "--server", g.server, "--protocol", era, "--json")
		}
	}},
	{"cancel", func(g *goldenRun) {
		for _, era := range eras {
			a := g.id("call", "forever", "--detach", "--server", g.server, "--protocol", era, "--json")
			g.cli("cancel", a, "--json")
			b := g.id("call", "forever", "--detach", "--server", g.server, "--protocol", era, "--json")
			c := g.id("call", "forever", "--detach", "--server", g.server, "--protocol", era, "--json")
			g.cli("cancel", b, c, "--wait", "--json")
		}
	}},
	{"watch-resume", func(g *goldenRun) {
		g.cli("resume", "--json")
		a := g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--server", g.server, "--json")
		b := g.id("call", "tool_error", "--detach", "--server", g.server, "--json")
		g.ended(a, b)
		g.cli("watch", a, b, "--json")
		c := g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--server", g.server, "--json")
		g.ended(c)
		g.cli("resume", "--json")
	}},
	{"update", func(g *goldenRun) {
		for _, era := range eras {
			id := g.id("call", "ask", "--detach", "--server", g.server, "--protocol", era, "--json")
			key := "name"
			if era == "2025-11-25" {
				key = "elicitation"
			}
			// The question must be open before it can be answered.
			waitFor(g.t, "the task to ask", 10*time.Second, func() bool {
				return strings.Contains(runCLI(g.t, g.t.Context(), g.env, "get", id, "--json").Stdout, `"input_required"`)
			})
			g.cli("update", id, "--answer", key+`={"name":"Ada"}`, "--json")
			g.cli("result", id, "--json")
			g.cli("update", id, "--answer", key+`={"name":"Ada"}`, "--server", g.server, "--protocol", era, "--json")
		}
	}},
	{"ledger", func(g *goldenRun) {
		id := g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--server", g.server, "--json")
		g.cli("adopt", id, "--json")
		g.cli("forget", id, "no-such-task", "--json")
		g.id("call", "sleep", "--arg", "seconds=1", "--server", g.server, "--keep", "--json")
		g.cli("prune", "--json")
	}},
	{"servers", func(g *goldenRun) {
		cfg := filepath.Join(g.t.TempDir(), "servers.json")
		body := fmt.Sprintf(`{"mcpServers":{"demo":{"url":%q},"local":{"command":"mcptask","args":["demo","serve","--stdio"]}}}`, g.server)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			g.t.Fatal(err)
		}
		g.cli("servers", "--config", cfg, "--json")
		g.cli("call", "echo", "--arg", "text=hi", "--server", "demo", "--config", cfg, "--json")
	}},
	{"auth", func(g *goldenRun) {
		g.cli("auth", "status", "--json")
		g.cli("auth", "logout", "--all", "--json")
	}},
	{"check", func(g *goldenRun) {
		// check sends off-spec requests on purpose: only what the demo sends is checked.
		url, _ := demotest.Start(g.t, demo.Options{}, true)
		g.cli("check", "--server", url, "--no-call", "--json")
	}},
	{"on-input-fail", func(g *goldenRun) {
		// Without --json, the questions nobody answered are still JSON on stdout.
		g.cli("call", "ask", "--server", g.server, "--protocol", "2026-07-28", "--answer", "other={}")
	}},
	{"jsonl", func(g *goldenRun) {
		g.jsonlKeys("call", "sleep", "--arg", "seconds=2", "--server", g.server, "--jsonl")
		g.jsonlKeys("call", "ask", "--server", g.server, "--protocol", "2026-07-28", "--jsonl", "--answer", "other={}")
		a := g.id("call", "sleep", "--arg", "seconds=1", "--detach", "--server", g.server, "--json")
		b := g.id("call", "fail", "--detach", "--server", g.server, "--json")
		g.jsonlKeys("watch", a, b, "--jsonl")
	}},
}

// lineDiff shows the lines of got and want that differ, by line number.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n  got  %s\n  want %s\n", i+1, gl, wl)
		}
	}
	return b.String()
}
