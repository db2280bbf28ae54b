package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/check"
	"github.com/mcptask/mcptask/internal/check/checktest"
	"github.com/mcptask/mcptask/internal/demo"
)

// verdicts reads the rule table of `mcptask check` (plain output, as a user sees it) into
// "era/ID" -> status.
func verdicts(t *testing.T, stdout string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(stdout, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "CHECK") {
		t.Fatalf("no rule table in:\n%s", stdout)
	}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("table line %q", l)
		}
		out[f[1][:4]+"/"+f[0]] = f[2]
	}
	return out
}

func with(v map[string]string, status string) []string {
	var out []string
	for k, s := range v {
		if s == status {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func ids(s string) []string {
	out := strings.Fields(s)
	sort.Strings(out)
	return out
}

// Every deliberately broken server fails exactly the rules its one fault breaks (and warns on
// exactly the SHOULDs it breaks), with `mcptask check --server URL` and no other flag.
func TestCheckBrokenServers(t *testing.T) {
	cases := []struct {
		fault      checktest.Fault
		fail, warn string
	}{
		{checktest.DiscoverResultType, "2026/B17 2026/B18", ""},
		{checktest.DiscoverNoCacheHints, "2026/B17d 2026/B0:server/discover", ""},
		{checktest.ListNoCacheHints, "2026/B17e 2026/B0:tools/list", ""},
		{checktest.PromptsNoCacheHints, "2026/B17e 2026/B0:prompts/list", ""},
		{checktest.ResourcesNoCacheHints, "2026/B17e 2026/B0:resources/list", ""},
		{checktest.TemplatesNoCacheHints, "2026/B17e 2026/B0:resources/templates/list", ""},
		{checktest.DiscoverNoServerInfo, "", "2026/B17c"},
		{checktest.ExtensionSettings, "2026/B17b", ""},
		{checktest.HalfModern, "", "2026/B17b"},
		{checktest.DiscoverLegacyCaps, "2026/B31a", ""},
		{checktest.NoResultTypeOnGet, "2026/B18 2026/B0:tasks/get", ""},
		{checktest.NoResultTypeOnCreate, "2026/B18 2026/B0:tools/call", ""},
		{checktest.MetaNotRequired, "2026/B19", ""},
		{checktest.AnyVersion, "2026/B20", ""},
		{checktest.NoNameValidation, "2026/B21", ""},
		{checktest.VersionHeaderCode, "2026/B21b", ""},
		{checktest.PingAnswered, "2026/B21c", ""},
		{checktest.TaskWithoutExt, "2026/B22", ""},
		{checktest.RequiredWrongCode, "2026/B22b", ""},
		{checktest.MissingCapNoData, "2026/B22b 2026/B0:errors", ""},
		{checktest.UndeclaredExtension, "2026/B17b", ""},
		{checktest.StampedComplete, "2026/B18b", ""},
		{checktest.FractionalMs, "2026/B24b 2026/B0:tools/call 2026/B0:tasks/get", ""},
		{checktest.LegacyVocabulary, "2026/B39 2026/B34", ""},
		{checktest.CancelCompletes, "", "2026/B28e"},
		{checktest.UpdateIgnored, "2026/B28f", ""},
		{checktest.ListenNoGate, "2026/B30b", ""},
		{checktest.HybridTaskParam, "2026/B22c", ""},
		{checktest.UpdateUnknownAck, "", "2026/B29b"},
		{checktest.NestedCreate, "2026/B24 2026/B0:tools/call", ""},
		{checktest.GetNotConsistent, "2026/B25", ""},
		{checktest.FailedNoError, "2026/B26 2026/B0:tasks/get", ""},
		{checktest.IsErrorFlipped, "2026/B27 2025/A10", ""},
		{checktest.CancelEnvelope, "2026/B28", ""},
		{checktest.CancelUnknownAck, "", "2026/B28b"},
		{checktest.CancelFinishedError, "", "2026/B28c"},
		{checktest.UpdateEnvelope, "2026/B28d", ""},
		{checktest.UnknownIDCode, "2026/B29 2025/A7 2025/A7b 2025/A7c", ""},
		{checktest.NoExtensionGate, "2026/B30", ""},
		{checktest.TasksResultAnswered, "2026/B31", ""},
		{checktest.TasksListAnswered, "2026/B31b", ""},
		{checktest.InputKeyReused, "2026/B32", ""},
		{checktest.TerminalChanges, "2026/B33 2025/A6", ""},
		{checktest.ResultChanges, "2026/B33b", ""},
		{checktest.ListenNoAck, "2026/B34", ""},
		{checktest.WeakIDs, "2026/B36 2025/A36", ""},
		{checktest.EarlyExpiry, "", "2026/B38 2025/A38"},
		{checktest.ContentNoText, "2026/B0:tools/call 2025/A0:tools/call 2025/A0:tasks/result", ""},
		{checktest.NoTTL, "2026/B24 2026/B0:tools/call 2026/B0:tasks/get 2025/A5 2025/A6b 2025/A0:tools/call 2025/A0:tasks/get 2025/A0:tasks/list 2025/A0:tasks/cancel", ""},
		{checktest.LegacyCapsKey, "2025/A1", ""},
		{checktest.LegacyFlatCreate, "2025/A2 2025/A0:tools/call", ""},
		{checktest.LegacyRequiredCode, "2025/A3", ""},
		{checktest.LegacyForbiddenTask, "", "2025/A3b"},
		{checktest.LegacyFirstStatus, "2025/A4", ""},
		{checktest.LegacyCancelNoop, "2025/A8 2025/A6", ""},
		{checktest.LegacyCancelTerminal, "2025/A8b", ""},
		{checktest.LegacyNoRelatedTask, "2025/A9", ""},
		{checktest.LegacyElicitNoMeta, "2025/A11", ""},
		{checktest.LegacyGetRelated, "", "2025/A12"},
		{checktest.LegacyListMissing, "2025/A13", ""},
		{checktest.LegacyVersionHeader, "2025/A16", ""},
		{checktest.LegacyCapsTypes, "2025/A1 2025/A0:initialize", ""},
		{checktest.LegacyUndeclared, "2025/A1b", ""},
		{checktest.LegacyResultEarly, "2025/A9b", ""},
		{checktest.LegacyFailedSuccess, "2025/A9c", ""},
		{checktest.LegacyTerminalLate, "2025/A6", ""},
		{checktest.LegacyCancelLate, "2025/A6 2025/A8", ""},
		{checktest.LegacyBadCursor, "2025/A13b", ""},
		{checktest.LegacyNotifyChanges, "2025/A6b", ""},
		{checktest.LegacyNotifyRelated, "", "2025/A12"},
		{checktest.LegacyMetaWins, "2025/A7d", ""},
		{checktest.LegacyResultError, "2025/A9b", ""},
		{checktest.LegacyNotifyFlood, "", ""}, // a hostile stream, not a broken rule: judged within bounds
	}
	// The runs wait on the network, not the CPU: run them side by side, then judge each.
	type outcome struct {
		r cliResult
		s *checktest.Server
	}
	out := make([]outcome, len(cases))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := checktest.Start(t, checktest.Options{Fault: c.fault})
			out[i] = outcome{runCLI(t, t.Context(), nil, "check", "--server", s.URL), s}
		}()
	}
	wg.Wait()
	for i, c := range cases {
		t.Run(string(c.fault), func(t *testing.T) {
			r, s := out[i].r, out[i].s
			v := verdicts(t, r.Stdout)
			if got, want := with(v, "fail"), ids(c.fail); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("failed %v, want exactly %v\n%s", got, want, r.Stdout)
			}
			if got, want := with(v, "warn"), ids(c.warn); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("warned %v, want exactly %v\n%s", got, want, r.Stdout)
			}
			wantCode := ExitOK
			if c.fail != "" {
				wantCode = ExitTaskFailed
			}
			if r.Code != wantCode {
				t.Errorf("exit %d, want %d; stderr %s", r.Code, wantCode, r.Stderr)
			}
			if s.WipeCalled() {
				t.Error("the checker called the tool annotated destructiveHint without being told to")
			}
		})
	}
}

// The clean server passes every rule in both eras and leaves none unexercised: every rule
// found a tool that shows what it needs, without being told which.
func TestCheckCleanServer(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL)
	v := verdicts(t, r.Stdout)
	if r.Code != ExitOK || len(with(v, "fail")) > 0 || len(with(v, "warn")) > 0 || len(with(v, "skip")) > 0 {
		t.Fatalf("clean server: exit %d, failed %v, warned %v, skipped %v\n%s\n%s", r.Code, with(v, "fail"), with(v, "warn"), with(v, "skip"), r.Stdout, r.Stderr)
	}
	if n := len(with(v, "pass")); n < 60 {
		t.Errorf("only %d rules passed", n)
	}
	if s.WipeCalled() {
		t.Error("the destructive tool was called")
	}
	// The report says what it did with each tool, including the answer it gave.
	for _, want := range []string{"wipe", "not called: its annotations say destructiveHint", `interview`, `"name":"check"`, "long-running; cancelled by the checker"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the tools report lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// The demo server passes every rule, in both eras, over HTTP and over stdio.
func TestCheckDemo(t *testing.T) {
	srv, err := demo.New(demo.Options{StepDelay: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The checker sends bad requests on purpose: what the demo answers must still be valid.
	hs := httptest.NewServer(specChecked(t, srv.Handler(), true))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	t.Setenv("MCPTASK_TEST_MAIN", "1")
	stdio := strings.Join(quoteAll(demoStdioArgv(t, true, "--step", "10ms", "--poll-interval", "20ms")), " ")
	for _, tr := range []struct {
		name    string
		flags   []string
		noHeads []string // rules that need HTTP headers: skipped on stdio, with the reason
	}{
		// The demo sends no notifications/tasks/status over HTTP (they are optional): A6b is
		// skipped there, and judged over stdio, where it sends them.
		{"http", []string{"--server", hs.URL + "/mcp"}, []string{"2025/A6b"}},
		{"stdio", []string{"--stdio", stdio}, []string{"2026/B21", "2026/B21b", "2025/A16"}},
	} {
		t.Run(tr.name, func(t *testing.T) {
			r := runCLI(t, t.Context(), nil, append([]string{"check"}, tr.flags...)...)
			v := verdicts(t, r.Stdout)
			for _, id := range tr.noHeads {
				if v[id] == "skip" {
					delete(v, id)
				}
			}
			if f, w, s := with(v, "fail"), with(v, "warn"), with(v, "skip"); len(f)+len(w)+len(s) > 0 {
				t.Errorf("the demo server: failed %v, warned %v, skipped %v\n%s\n%s", f, w, s, r.Stdout, r.Stderr)
			}
			if len(with(v, "pass")) < 55 {
				t.Errorf("only %d rules passed against the demo\n%s", len(with(v, "pass")), r.Stdout)
			}
		})
	}
}

// The only task tools take required, constrained arguments: the checker builds them from the
// inputSchema (the server refuses anything else) and runs the task rules on them.
func TestCheckBuildsRequiredArguments(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Tools: checktest.RequiredArgs})
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL, "--json")
	var doc struct {
		Results []struct{ ID, Era, Status, Seen string } `json:"results"`
		Tools   []struct {
			Era, Name string
			Args      json.RawMessage
			Shows     []string
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.Stdout)
	}
	if r.Code != ExitOK {
		t.Errorf("exit %d\n%s", r.Code, r.Stdout)
	}
	for _, res := range doc.Results {
		if res.Status == "fail" || (res.Status == "skip" && (res.ID == "B24" || res.ID == "A2" || res.ID == "B28" || res.ID == "A8" || res.ID == "B33")) {
			t.Errorf("%s %s %s: %s", res.Era, res.ID, res.Status, res.Seen)
		}
	}
	for _, tool := range doc.Tools {
		var args map[string]any
		_ = json.Unmarshal(tool.Args, &args)
		switch tool.Name {
		case "summarize":
			if args["count"] != 2.0 || args["mode"] != "fast" || len(args["label"].(string)) < 3 || len(args["tags"].([]any)) != 1 || args["opts"].(map[string]any)["deep"] != false {
				t.Errorf("%s summarize args %s", tool.Era, tool.Args)
			}
			if !strings.Contains(strings.Join(tool.Shows, ","), "completes") {
				t.Errorf("%s summarize shows %v", tool.Era, tool.Shows)
			}
		case "crawl":
			if args["depth"] != 1.0 || !strings.Contains(strings.Join(tool.Shows, ","), "cancellable") {
				t.Errorf("%s crawl args %s shows %v", tool.Era, tool.Args, tool.Shows)
			}
		}
	}
	if s.Calls("summarize") == 0 {
		t.Error("summarize was never called")
	}
}

// The only task tool asks for input: the checker answers it from its requestedSchema (and
// says how), so the input rules run and nothing times out.
func TestCheckAnswersInput(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Tools: checktest.InputOnly})
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL)
	v := verdicts(t, r.Stdout)
	if r.Code != ExitOK || len(with(v, "fail")) > 0 {
		t.Fatalf("exit %d, failed %v\n%s", r.Code, with(v, "fail"), r.Stdout)
	}
	for _, id := range []string{"2026/B28d", "2026/B32", "2026/B26", "2026/B33", "2025/A11", "2025/A9", "2025/A6"} {
		if v[id] != "pass" {
			t.Errorf("%s is %q, want pass\n%s", id, v[id], r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, `input answered with profile={"action":"accept","content":{"color":"red","name":"check"}}`) ||
		!strings.Contains(r.Stdout, `input answered with elicitation/create={"action":"accept","content":{"color":"red","name":"check"}}`) {
		t.Errorf("the report does not show the answers:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stdout, "did not finish") {
		t.Errorf("an input task was reported as not finishing:\n%s", r.Stdout)
	}
}

func TestCheckFlags(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	// --tool forces a destructive tool, with the arguments given; --protocol picks one era.
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL, "--tool", "wipe", "--args", `{"really":true}`, "--protocol", "2026-07-28", "--json")
	var doc struct {
		Results []struct{ Era string }
		Tools   []struct {
			Era, Name string
			Called    bool
			Args      json.RawMessage
		}
	}
	_ = json.Unmarshal([]byte(r.Stdout), &doc)
	wiped := false
	for _, tool := range doc.Tools {
		wiped = wiped || (tool.Name == "wipe" && tool.Called && string(tool.Args) == `{"really":true}`)
	}
	if r.Code != ExitOK || !s.WipeCalled() || !wiped {
		t.Errorf("--tool wipe: exit %d, called %v\n%s\n%s", r.Code, s.WipeCalled(), r.Stdout, r.Stderr)
	}
	for _, res := range doc.Results {
		if res.Era != "2026-07-28" {
			t.Errorf("--protocol 2026-07-28 checked %s too", res.Era)
		}
	}
	// --no-call calls nothing, and says so for every task rule.
	s2 := checktest.Start(t, checktest.Options{})
	r = runCLI(t, t.Context(), nil, "check", "--server", s2.URL, "--no-call")
	v := verdicts(t, r.Stdout)
	if r.Code != ExitOK || s2.Calls("summarize") != 0 || v["2026/B24"] != "skip" || v["2026/B21c"] != "pass" || v["2025/A7"] != "pass" {
		t.Errorf("--no-call: exit %d, summarize called %d times, B24 %s, B21c %s\n%s", r.Code, s2.Calls("summarize"), v["2026/B24"], v["2026/B21c"], r.Stdout)
	}
	if !strings.Contains(r.Stdout, "--no-call") {
		t.Errorf("--no-call: the skips do not say why\n%s", r.Stdout)
	}
	// A small budget is kept, and the report says what it cut.
	slow := checktest.Start(t, checktest.Options{Step: 10 * time.Second})
	start := time.Now()
	r = runCLI(t, t.Context(), nil, "check", "--server", slow.URL, "--budget", "1s")
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("--budget 1s took %s", took)
	}
	if !strings.Contains(r.Stderr, "budget cut") {
		t.Errorf("--budget 1s: the summary does not say what was cut:\n%s\n%s", r.Stdout, r.Stderr)
	}
	// Usage errors send nothing.
	for _, args := range [][]string{
		{"--args", "{}"},
		{"--tool", "a", "--args", "{}", "--args", "{}"},
		{"--tool", "a", "--args", "[1]"},
		{"--budget", "0s"},
	} {
		r = runCLI(t, t.Context(), nil, append([]string{"check", "--server", s.URL}, args...)...)
		if r.Code != ExitUsage {
			t.Errorf("check %v: exit %d, want %d; %s", args, r.Code, ExitUsage, r.Stderr)
		}
	}
	// A tool the server does not have is a warning, not a crash.
	r = runCLI(t, t.Context(), nil, "check", "--server", s.URL, "--no-call", "--tool", "nope", "--protocol", "2026-07-28")
	if !strings.Contains(r.Stderr, "--tool nope: the server does not list") {
		t.Errorf("unknown --tool: %s", r.Stderr)
	}
}

// --json and --junit carry the same verdicts as the table: the rule, what was seen, the section.
func TestCheckReports(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Fault: checktest.IsErrorFlipped})
	junit := filepath.Join(t.TempDir(), "check.xml")
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL, "--json", "--junit", junit)
	if r.Code != ExitTaskFailed {
		t.Fatalf("exit %d", r.Code)
	}
	var doc struct {
		Type    string
		Results []struct{ ID, Era, Status, Seen, Section, Title string }
		Tools   []map[string]any
		Budget  struct{ LimitMs, UsedMs int64 }
		Summary map[string]int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range doc.Results {
		if res.ID == "B27" && res.Status == "fail" {
			found = strings.Contains(res.Seen, "validate") && strings.Contains(res.Seen, "ended failed") && res.Section == "EXT §Task Execution Errors"
		}
	}
	if !found || doc.Type != "check" || len(doc.Tools) < 10 || doc.Budget.LimitMs != 60000 || doc.Summary["fail"] != 2 {
		t.Errorf("--json: %+v", doc)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	xs := string(x)
	if strings.Count(xs, "<testsuite ") != 2 || strings.Count(xs, "<failure ") != 2 || !strings.Contains(xs, `B27 (EXT §Task Execution Errors): validate: a tool error`) ||
		!strings.Contains(xs, "validate: called with {}") {
		t.Errorf("junit report:\n%s", xs)
	}
	r = runCLI(t, t.Context(), nil, "check", "--server", "http://127.0.0.1:1/mcp")
	if r.Code != ExitFailure || !strings.Contains(r.Stderr, "could not be reached") {
		t.Errorf("unreachable server: %d %s", r.Code, r.Stderr)
	}
}

// everythingFindings are the rules the reference server breaks, with the spec's words:
//   - A3: C25-TASKS §Tool-Level Negotiation: "If execution.taskSupport is "required" ...
//     Servers MUST return a -32601 (Method not found) error if a client does not attempt to
//     do so." It answers a CallToolResult with isError whose text quotes -32601 instead.
//   - A7d: C25-TASKS §Associating Task-Related Messages: for tasks/get "receivers MUST
//     ignore such metadata if present in favor of the RPC method parameter". The SDK's
//     Protocol looks up the related-task of every request and answers -32602 when it is
//     unknown, even on tasks/get naming a real task.
var everythingFindings = map[string]string{"A3": "requires task augmentation", "A7d": "Task not found: mcptask-check-no-such-task"}

// mcptask check against the official reference server, over HTTP and stdio: it speaks only
// 2025-11-25, and the checker runs its task rules on simulate-research-query without being
// told, and says what it could not exercise.
func TestCheckEverything(t *testing.T) {
	index := everythingServer(t)
	stdio := "node " + shellQuote(index) + " stdio"
	httpURL := startEverythingHTTP(t, index)
	for _, tr := range []struct {
		name  string
		flags []string
	}{
		{"http", []string{"--server", httpURL}},
		{"stdio", []string{"--stdio", stdio}},
	} {
		t.Run(tr.name, func(t *testing.T) {
			r := runCLI(t, t.Context(), nil, append([]string{"check", "--json"}, tr.flags...)...)
			var doc struct {
				Results []struct {
					ID, Era, Status, Seen string
					Tools                 []string
				}
				Tools []struct {
					Era, Name, Seen, Why string
					Called               bool
					Shows, Answers       []string
				}
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("check --json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
			}
			byID := map[string]int{}
			for i, res := range doc.Results {
				byID[res.Era[:4]+"/"+res.ID] = i
				if res.Status == "fail" && !strings.Contains(res.Seen, everythingFindings[res.ID]) || (res.Status == "fail" && everythingFindings[res.ID] == "") {
					t.Errorf("%s %s failed: %s", res.Era, res.ID, res.Seen)
				}
			}
			// The task rules ran on simulate-research-query, found by observation.
			for _, id := range []string{"2025/A2", "2025/A4", "2025/A5", "2025/A6", "2025/A8", "2025/A9", "2025/A13"} {
				i, ok := byID[id]
				if !ok || doc.Results[i].Status != "pass" || !contains(doc.Results[i].Tools, "simulate-research-query") {
					t.Errorf("%s did not pass on simulate-research-query: %+v", id, doc.Results[i])
				}
			}
			// What it could not exercise is said, with the reason.
			for id, why := range map[string]string{
				"2026/era": "did not answer in 2026-07-28",
				"2025/A10": "no tool produced a tool error",
				"2025/A11": "asked for input",
			} {
				if i, ok := byID[id]; !ok || doc.Results[i].Status != "skip" || !strings.Contains(doc.Results[i].Seen, why) {
					t.Errorf("%s: want a skip saying %q, got %+v", id, why, doc.Results[i])
				}
			}
			found := false
			for _, tool := range doc.Tools {
				if tool.Name == "simulate-research-query" {
					found = tool.Called && contains(tool.Shows, "completes") && contains(tool.Shows, "cancellable")
				}
				// Over stdio the answers to the tools called together share one stream and are
				// listed under each of them, in the order the server asked: the form's accept
				// must be among them, whichever came first.
				if tool.Name == "trigger-elicitation-request" && !slices.ContainsFunc(tool.Answers, func(a string) bool { return strings.Contains(a, `"action":"accept"`) }) {
					t.Errorf("the elicitation of trigger-elicitation-request was not answered from its schema: %+v", tool)
				}
			}
			if !found {
				t.Errorf("the tools report does not show simulate-research-query completing and cancellable:\n%s", r.Stdout)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sdkV1Deviations are the 2025-11-25 MUSTs the official TypeScript SDK v1 (1.32.2, pinned in
// testdata/interop) itself breaks, and how `mcptask check` words each; docs/guide/check.md's
// "Checking a server" lists them. The library (server/mcp.js, McpServer with registerToolTask)
// wraps the -32601 for a task-only tool called without task into a CallToolResult with
// isError (A3); its Protocol (shared/protocol.js) looks up the related-task metadata of every
// request and refuses one naming an unknown task with -32602, even a tasks/get whose taskId
// names a real task, where the metadata MUST be ignored (A7d). Its example simpleTaskInteractive (a low-level Server with its own task
// handlers) answers plain Errors, so -32603 where -32601 / -32602 are required (A3, A7, A7b),
// and creates its tasks in input_required (A4).
var sdkV1Deviations = map[string]map[string]string{
	"everything": {
		"A3":  "MCP error -32601: Tool simulate-research-query requires task augmentation",
		"A7d": `with an unknown task in _meta related-task, got error -32602 "MCP error -32602: Task not found`,
	},
	"simpleTaskInteractive": {
		"A3":  `got error -32603 "Tool confirm_delete requires task mode", want -32601`,
		"A4":  "the CreateTaskResult says input_required",
		"A7":  "got error -32603",
		"A7b": "got error -32603",
	},
}

// Against servers on the official TypeScript SDK v1 as people run them (no flags), check
// passes everything but the MUSTs the SDK itself breaks, and names each precisely: the rule,
// the spec sentence and what was seen. It holds the standalone GET stream, where the SDK sends
// notifications/tasks/status (validated: A6b) and the requests of a task (answered: A11), and
// keeps to the default budget.
func TestCheckSDKv1(t *testing.T) {
	index := everythingServer(t)
	servers := map[string]string{
		"everything":            startEverythingHTTP(t, index),
		"simpleTaskInteractive": startSimpleTaskInteractive(t),
	}
	mustPass := map[string][]string{
		"everything":            {"A6b", "A9", "A9b", "A9c", "A13b", "A1b", "A36", "A6", "A8"},
		"simpleTaskInteractive": {"A9", "A9b", "A9c", "A11", "A6"},
	}
	for name, url := range servers {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			r := runCLI(t, t.Context(), nil, "check", "--json", "--server", url)
			if took := time.Since(start); took > 65*time.Second {
				t.Errorf("check took %s, over its default 60s budget", took)
			}
			var doc struct {
				Results []struct{ ID, Era, Status, Seen, Quote string }
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("check --json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
			}
			status := map[string]string{}
			for _, res := range doc.Results {
				if res.Era != "2025-11-25" {
					continue
				}
				status[res.ID] = res.Status
				want, known := sdkV1Deviations[name][res.ID]
				switch {
				case res.Status == "fail" && !known:
					t.Errorf("%s failed, and it is not a known SDK deviation: %s", res.ID, res.Seen)
				case res.Status == "fail" && (!strings.Contains(res.Seen, want) || !strings.Contains(res.Quote, "MUST")):
					t.Errorf("%s: seen %q quote %q, want the seen to say %q and the spec sentence quoted", res.ID, res.Seen, res.Quote, want)
				}
			}
			for id := range sdkV1Deviations[name] {
				if status[id] != "fail" {
					t.Errorf("the known SDK deviation %s is %q, want fail (has the SDK changed? update docs/guide/check.md)", id, status[id])
				}
			}
			for _, id := range mustPass[name] {
				if status[id] != "pass" {
					t.Errorf("%s: %q, want pass", id, status[id])
				}
			}
			if r.Code != ExitTaskFailed {
				t.Errorf("exit %d, want %d", r.Code, ExitTaskFailed)
			}
		})
	}
}

// A guessable task id fails A36 without an authorization context (the broken-servers table),
// and is a warning when the run sends an Authorization header, to which the server may bind
// its tasks instead (C25-TASKS §Security Considerations).
func TestCheckIDsWithAuthorization(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Fault: checktest.WeakIDs})
	r := runCLI(t, t.Context(), map[string]string{"CHECK_TOKEN": "not-a-real-token"}, "check", "--server", s.URL, "--protocol", "2025-11-25", "--bearer-env", "CHECK_TOKEN")
	v := verdicts(t, r.Stdout)
	if v["2025/A36"] != "warn" || len(with(v, "fail")) > 0 {
		t.Errorf("A36 %q, failed %v: want a warning and no failure\n%s", v["2025/A36"], with(v, "fail"), r.Stdout)
	}
	if strings.Contains(r.Stdout+r.Stderr, "not-a-real-token") {
		t.Error("the token was printed")
	}
}

// A --tool the server does not list is named in a warning (the checker's typed reason, not its
// words, decides it); a tool the server lists is not.
func TestCheckWarnsOfAnUnlistedTool(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	r := runCLI(t, t.Context(), nil, "check", "--server", s.URL, "--no-call", "--tool", "nosuch", "--tool", "validate")
	if !strings.Contains(r.Stderr, "--tool nosuch: the server does not list a tool of that name in 2026-07-28") ||
		!strings.Contains(r.Stderr, "--tool nosuch: the server does not list a tool of that name in 2025-11-25") {
		t.Errorf("no warning for the unlisted tool in both eras:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stderr, "--tool validate:") {
		t.Errorf("a listed tool was warned about:\n%s", r.Stderr)
	}
}

// The two 2026-07-28 probes that need no flag, proven on the demo itself with its fault switch:
// a demo that serves tasks without declaring the extension fails B17b, and the task rules still
// run on its tasks (the catalogue calls every tool with the extension declared); a demo whose
// tool error ends failed fails B27, found by calling the same tool without the extension (it
// then runs synchronously and returns isError: true). Nothing else fails.
func TestCheckDemoFaults(t *testing.T) {
	for _, c := range []struct {
		fault demo.Fault
		fail  string
		seen  string
		ran   []string // task rules that must have run (pass)
	}{
		{demo.FaultUndeclaredExtension, "2026/B17b", "does not declare the io.modelcontextprotocol/tasks extension, yet", []string{"2026/B24", "2026/B27", "2026/B28", "2026/B33"}},
		{demo.FaultToolErrorFailed, "2026/B27", "tool_error: a tool error (the same call without a task returns isError: true) ended failed", []string{"2026/B24", "2026/B17b"}},
	} {
		t.Run(string(c.fault), func(t *testing.T) {
			srv, err := demo.New(demo.Options{StepDelay: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond, Fault: c.fault})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(specChecked(t, srv.Handler(), true))
			t.Cleanup(func() { hs.Close(); srv.Close() })
			r := runCLI(t, t.Context(), nil, "check", "--server", hs.URL+"/mcp", "--protocol", "2026-07-28", "--budget", "20s")
			v := verdicts(t, r.Stdout)
			if got := with(v, "fail"); strings.Join(got, " ") != c.fail || r.Code != ExitTaskFailed {
				t.Errorf("exit %d, failed %v, want exactly %s\n%s", r.Code, got, c.fail, r.Stdout)
			}
			if !strings.Contains(r.Stdout, c.seen) {
				t.Errorf("the failure does not say %q:\n%s", c.seen, r.Stdout)
			}
			for _, id := range c.ran {
				if v[id] != "pass" {
					t.Errorf("%s is %q, want pass: the task rules must run on the demo's tasks", id, v[id])
				}
			}
		})
	}
}

// --strict makes a warning (here B28e: a cancelled task that completes, which the spec allows)
// fail the run with exit 3, for CI gates; without it the run passes. On a terminal the report
// is the person's one: the warning first with its rule, section and what was seen, wrapped to
// the terminal's 80 columns, a spinner on stderr while it runs, and the status words in
// colour unless NO_COLOR.
func TestCheckStrictAndTerminal(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Fault: checktest.CancelCompletes})
	args := []string{"check", "--server", s.URL, "--protocol", "2026-07-28", "--budget", "20s"}
	if r := runCLI(t, t.Context(), nil, args...); r.Code != ExitOK {
		t.Errorf("a warning alone: exit %d, want %d\n%s", r.Code, ExitOK, r.Stderr)
	}
	r := runCLI(t, t.Context(), nil, append(args, "--strict")...)
	if r.Code != ExitTaskFailed || !strings.Contains(r.Stderr, "--strict: 1 warnings and") {
		t.Errorf("--strict with a warning: exit %d, want %d\n%s", r.Code, ExitTaskFailed, r.Stderr)
	}
	for _, colour := range []bool{false, true} {
		out, errOut := &lockedBuffer{}, &lockedBuffer{}
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
		ios.SetTTY(false, true, true)
		ios.SetSize(80, 30)
		env := map[string]string{"NO_COLOR": "1"}
		if colour {
			env = nil
		}
		code := runOn(t, t.Context(), ios, env, args...)
		stdout := out.String()
		if code != ExitOK || !strings.Contains(stdout, "WARNINGS (1)") || !strings.Contains(stdout, "B28e 2026-07-28") ||
			!strings.Contains(stdout, "spec: EXT §Task Cancellation") || !strings.Contains(stdout, "(--all lists them)") || strings.Contains(stdout, "CHECK ") {
			t.Errorf("colour %v: exit %d, not the terminal report:\n%s", colour, code, stdout)
		}
		for _, l := range strings.Split(stdout, "\n") {
			if n := len([]rune(ansiStrip(l))); n > 80 {
				t.Errorf("a line of %d columns on an 80-column terminal: %q", n, l)
			}
		}
		if colour != strings.Contains(stdout, "\x1b[") {
			t.Errorf("colour %v, escape codes in the report: %v", colour, !colour)
		}
		if e := errOut.String(); !strings.Contains(e, " checking") || !strings.HasSuffix(e, "\r\x1b[K") {
			t.Errorf("no spinner on stderr, or its line not cleared: %q", e)
		}
	}
}

// ansiStrip drops CSI sequences (the report's colours) to count columns.
func ansiStrip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			for i += 2; i < len(s) && (s[i] < 0x40 || s[i] > 0x7e); i++ {
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The spinner's line says the era, the phase and the tool, fits the terminal, and shows a
// server's tool name only once made safe: a name carrying escape sequences cannot move the
// cursor or retitle the window while check runs.
func TestCheckSpinnerLine(t *testing.T) {
	p := check.Progress{Era: "2026-07-28", Phase: "calling tools", Tool: "summarize\x1b]0;pwned\x07\x1b[2J"}
	if got := checkSpinnerLine("⠋", p, 80); got != "⠋ checking 2026-07-28 · calling tools · summarize" {
		t.Errorf("line %q", got)
	}
	if got := checkSpinnerLine("⠋", p, 30); len([]rune(got)) > 29 || !strings.HasSuffix(got, "…") {
		t.Errorf("at 30 columns: %q (%d)", got, len([]rune(got)))
	}
	if got := checkSpinnerLine("⠋", check.Progress{}, 80); got != "⠋ checking" {
		t.Errorf("before the first era: %q", got)
	}
}
