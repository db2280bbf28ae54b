package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/check/checktest"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
)

func connector(url string) func(ctx context.Context, era string, co rpc.ClientOptions) (*rpc.Client, error) {
	return func(ctx context.Context, era string, co rpc.ClientOptions) (*rpc.Client, error) {
		tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
		if err != nil {
			return nil, err
		}
		co.Protocol = era
		co.Info = rpc.Implementation{Name: "check-test", Version: "1"}
		c := rpc.NewClient(tr, co)
		if err := c.Connect(ctx); err != nil {
			tr.Close()
			return nil, err
		}
		return c, nil
	}
}

// The embedded schemas are the official files, byte for byte: the ones in shared/spec,
// checked by their sha256 from SOURCES.md.
func TestEmbeddedSchemasAreTheOfficialOnes(t *testing.T) {
	sources, err := os.ReadFile("schemas/SOURCES.md")
	if err != nil {
		t.Fatal(err)
	}
	dir, dirErr := spectest.SpecDir()
	for _, f := range []string{schemaLegacy, schemaModern, schemaExt} {
		b, err := schemaFiles.ReadFile("schemas/" + f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if !strings.Contains(string(sources), hex.EncodeToString(sum[:])) {
			t.Errorf("%s: sha256 %x is not the one SOURCES.md records", f, sum)
		}
		if dirErr != nil {
			continue
		}
		official, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || string(official) != string(b) {
			t.Errorf("%s differs from %s (%v)", f, filepath.Join(dir, f), err)
		}
	}
}

func TestSchemaValidation(t *testing.T) {
	for _, tt := range []struct {
		file, def, doc string
		ok             bool
	}{
		{schemaModern, "DiscoverResult", `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}`, true},
		{schemaModern, "DiscoverResult", `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`, false},
		{schemaExt, "CreateTaskResult", `{"resultType":"task","taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`, true},
		{schemaExt, "CreateTaskResult", `{"resultType":"task","taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x"}`, false},
		{schemaLegacy, "CreateTaskResult", `{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null}}`, true},
	} {
		p := official.validate(tt.file, tt.def, []byte(tt.doc))
		if (p == "") != tt.ok {
			t.Errorf("%s %s: %q", tt.def, tt.doc, p)
		}
		if !tt.ok && !strings.Contains(p, tt.def+": at ") {
			t.Errorf("the problem does not say where: %q", p)
		}
	}
	// What is missing is named in plain words.
	p := official.validate(schemaExt, "CreateTaskResult", []byte(`{"resultType":"task","taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x"}`))
	if !strings.Contains(p, "missing property 'ttlMs'") {
		t.Errorf("the problem does not name the missing member: %q", p)
	}
}

func TestBuildArgs(t *testing.T) {
	for _, tt := range []struct{ schema, want, err string }{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`, ""},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":3},"x":{"type":"number","exclusiveMinimum":5},"b":{"type":"boolean"}},"required":["n","x","b"]}`, `{"b":false,"n":3,"x":6}`, ""},
		{`{"type":"object","properties":{"m":{"type":"string","enum":["slow","fast"]},"d":{"type":"integer","default":7}},"required":["m","d"]}`, `{"d":7,"m":"slow"}`, ""},
		{`{"type":"object","properties":{"s":{"type":"string","minLength":8},"u":{"type":"string","format":"uri"},"p":{"type":"string","pattern":"^[0-9]+$"}},"required":["s","u","p"]}`, `{"p":"1","s":"checkxxx","u":"https://example.com/"}`, ""},
		{`{"type":"object","properties":{"l":{"type":"array","minItems":2,"items":{"type":"integer","maximum":-4}}},"required":["l"]}`, `{"l":[-4,-4]}`, ""},
		{`{"type":"object","properties":{"o":{"$ref":"#/$defs/O"}},"required":["o"],"$defs":{"O":{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"]}}}`, `{"o":{"k":"check"}}`, ""},
		{`{"type":"object","properties":{"c":{"oneOf":[{"type":"null"},{"const":"x"}]}},"required":["c"]}`, `{"c":"x"}`, ""},
		{`{"type":"object","properties":{"p":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"}},"required":["p"]}`, ``, "argument p: no value built matches its pattern"},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":4}},"required":["n"]}`, ``, "argument n: no number fits its bounds"},
	} {
		got, err := buildArgs(t.Context(), json.RawMessage(tt.schema))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.schema, err, tt.err)
			}
			continue
		}
		b, _ := json.Marshal(got)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.schema, b, err, tt.want)
		}
	}
}

func TestAnswerRequest(t *testing.T) {
	form := `{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"},"who":{"type":"string","oneOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]},"note":{"type":"string"}},"required":["ok","who"]}}`
	for _, tt := range []struct{ method, params, want string }{
		{"elicitation/create", form, `{"action":"accept","content":{"ok":false,"who":"a"}}`},
		{"elicitation/create", `{"mode":"url","url":"https://x","message":"open"}`, `{"action":"decline"}`},
		{"roots/list", `{}`, `{"roots":[]}`},
	} {
		got, err := answerRequest(tt.method, json.RawMessage(tt.params))
		if err != nil || string(compact(got)) != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.method, got, err, tt.want)
		}
	}
	if _, err := answerRequest("tools/call", nil); err == nil {
		t.Error("a request that is not an input request was answered")
	}
}

func TestTransitions(t *testing.T) {
	for seq, want := range map[string]string{
		"working working input_required working completed completed": "",
		"working completed working":                                  "the terminal status completed changed to working",
		"input_required cancelled":                                   "",
		"working paused":                                             "working -> paused is not in the state machine",
	} {
		if got := transitions(strings.Fields(seq)); !strings.HasPrefix(got, want) || (want == "" && got != "") {
			t.Errorf("%s: %q, want %q", seq, got, want)
		}
	}
}

func TestRuleOrder(t *testing.T) {
	ids := []string{"B17b", "B0:tools/call", "B21", "B17", "B0:errors", "B17e", "B38", "B2"}
	want := "B0:errors B0:tools/call B2 B17 B17b B17e B21 B38"
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ruleLess(ids[j], ids[i]) {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("%s, want %s", got, want)
	}
}

// Run keeps to its budget however slow the server is, and says what the budget cut.
func TestRunKeepsItsBudget(t *testing.T) {
	s := checktest.Start(t, checktest.Options{Step: time.Minute})
	start := time.Now()
	rep := Run(t.Context(), Options{HTTP: true, Budget: 1500 * time.Millisecond, Connect: connector(s.URL)})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a 1.5s budget took %s", took)
	}
	if len(rep.Cut) == 0 || rep.Failed() {
		t.Errorf("cut %v, failed %v: %+v", rep.Cut, rep.Failed(), rep.Results)
	}
}

// Every result the checker gives is a rule of the catalogue (which the README lists), with the
// same section, and every rule of the catalogue is judged against a server that offers all.
func TestEveryResultIsCatalogued(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	rep := Run(t.Context(), Options{HTTP: true, Connect: connector(s.URL)})
	seen := map[string]bool{}
	for _, r := range rep.Results {
		rule, ok := ruleOf(r.ID)
		if !ok {
			t.Errorf("%s %s is not in the catalogue", r.Era, r.ID)
			continue
		}
		seen[rule.ID] = true
		if rule.Era != r.Era || r.Section != rule.Section {
			t.Errorf("%s: era %s section %q, the catalogue says %s %q", r.ID, r.Era, r.Section, rule.Era, rule.Section)
		}
		// One title per rule: a schema result names its kind of answer, any other result has
		// its rule's title (or, for a part of the rule, its Alt).
		if perKind := strings.Contains(r.ID, ":"); !perKind && r.Title != rule.Title && (rule.Alt == "" || r.Title != rule.Alt) {
			t.Errorf("%s: title %q, the catalogue says %q", r.ID, r.Title, rule.Title)
		}
	}
	for _, rule := range Rules {
		if !seen[rule.ID] {
			t.Errorf("%s is in the catalogue but was never judged", rule.ID)
		}
	}
}

// B17e judges the prompts and resources lists only when server/discover declares them, and
// says what it did not judge and why; a server with resources but no templates is not blamed
// for answering resources/templates/list with -32601.
func TestListHintsOnlyWhenDeclared(t *testing.T) {
	for _, c := range []struct {
		name string
		o    checktest.Options
		seen string
	}{
		{"all declared", checktest.Options{}, ""},
		{"none declared", checktest.Options{Fault: checktest.HalfModern},
			"not judged: prompts/list (no prompts capability declared); resources/list and resources/templates/list (no resources capability declared)"},
		{"no templates", checktest.Options{NoTemplates: true}, "not judged: resources/templates/list (answered -32601: no templates)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := checktest.Start(t, c.o)
			rep := Run(t.Context(), Options{HTTP: true, Connect: connector(s.URL), Eras: []string{rpc.VersionModern}, NoCall: true, Budget: 20 * time.Second})
			found := false
			for _, r := range rep.Results {
				if r.ID == "B17e" {
					found = true
					if r.Status != Pass || r.Seen != c.seen {
						t.Errorf("B17e %s %q, want pass %q", r.Status, r.Seen, c.seen)
					}
				}
			}
			if !found {
				t.Error("B17e was not judged")
			}
		})
	}
}

// The guide's "Checking a server" (docs/guide/check.md, once the README's section) lists every
// rule with its section and what it needs.
func TestReadmeListsEveryRule(t *testing.T) {
	b, err := os.ReadFile("../../docs/guide/check.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, rule := range Rules {
		row := "| `" + rule.ID + "` | " + rule.Era + " | " + rule.Description() + " | " + rule.Section + " | " + rule.Needs + " |"
		if !strings.Contains(readme, row) {
			t.Errorf("docs/guide/check.md lacks the row\n%s", row)
		}
	}
}

// However short the budget, what it cuts is skipped and said, never blamed on the server.
func TestBudgetNeverBlamesTheServer(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	for _, b := range []time.Duration{300 * time.Millisecond, 1100 * time.Millisecond, 2200 * time.Millisecond} {
		start := time.Now()
		rep := Run(t.Context(), Options{HTTP: true, Connect: connector(s.URL), Budget: b})
		if took := time.Since(start); took > b+time.Second {
			t.Errorf("budget %s took %s", b, took)
		}
		for _, r := range rep.Results {
			if r.Status == Fail || r.Status == Warn {
				t.Errorf("budget %s: %s %s %s: %s", b, r.Era, r.ID, r.Status, r.Seen)
			}
		}
		if len(rep.Cut) == 0 {
			t.Errorf("budget %s: the report does not say what was cut", b)
		}
	}
}

// A rule the time budget kept from being judged is a skip that the report's cuts list, and a
// rule the cuts list is such a skip: the cut is recorded where it is decided (cutShort), not
// read back from the words of a result. The server answers everything but tasks/get and
// tasks/cancel, which it holds until the budget ends them.
func TestEveryBudgetSkipIsACut(t *testing.T) {
	s := checktest.Start(t, checktest.Options{})
	target, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"tasks/get"`)) || bytes.Contains(body, []byte(`"method":"tasks/cancel"`)) {
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(held.Close)
	u := held.URL + target.Path
	rep := Run(t.Context(), Options{HTTP: true, Budget: 3 * time.Second, Connect: connector(u)})
	cut := map[string]bool{}
	for _, c := range rep.Cut {
		cut[c] = true
	}
	n := 0
	for _, r := range rep.Results {
		key := r.Era + " " + r.ID + " " + r.Title
		budget := r.Status == Skip && strings.HasPrefix(r.Seen, errBudget.Error())
		if budget {
			n++
		}
		if budget != cut[key] {
			t.Errorf("%s: %s %q, listed in the cuts: %v", key, r.Status, r.Seen, cut[key])
		}
	}
	if n == 0 {
		t.Errorf("no rule was cut by the budget although tasks/get and tasks/cancel never answer: %+v", rep.Cut)
	}
}

// Every rule is one value that says how it is judged: the rules of an era's file are of that
// era, and every rule but the per-kind schema rules (A0, B0) has a phase and is judged exactly
// one way (a task rule, a probe or a whole rule).
func TestRulesSayHowTheyAreJudged(t *testing.T) {
	for era, rules := range map[string][]Rule{rpc.VersionModern: rules2026, rpc.VersionLegacy: rules2025} {
		for _, rule := range rules {
			ways := btoi(rule.judge != nil) + btoi(rule.probe != nil) + btoi(rule.whole != nil)
			schema := rule.ID == "A0" || rule.ID == "B0"
			if rule.Era != era || schema != (rule.phase == perKind) || ways != 1-btoi(schema) ||
				rule.evidence != nil && rule.judge == nil || rule.exchange != nil && rule.judge == nil {
				t.Errorf("%s %s: era %s, phase %d, judged %d ways", era, rule.ID, rule.Era, rule.phase, ways)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// "Not judged" is an outcome, never a silent skip: every rule that could not run says why,
// whatever kept it from running (no call allowed, no extension, a server that offers little).
func TestEveryNotJudgedSaysWhy(t *testing.T) {
	for _, c := range []struct {
		name string
		o    checktest.Options
		opts Options
	}{
		{"no-call", checktest.Options{}, Options{NoCall: true}},
		{"half-modern", checktest.Options{Fault: checktest.HalfModern}, Options{Eras: []string{rpc.VersionModern}}},
		{"input only", checktest.Options{Tools: checktest.InputOnly}, Options{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := checktest.Start(t, c.o)
			o := c.opts
			o.HTTP, o.Connect, o.Budget = true, connector(s.URL), 20*time.Second
			rep := Run(t.Context(), o)
			n := 0
			for _, r := range rep.Results {
				if r.Status != Skip {
					continue
				}
				n++
				if strings.TrimSpace(r.Seen) == "" {
					t.Errorf("%s %s is not judged and does not say why", r.Era, r.ID)
				}
			}
			if n == 0 {
				t.Error("nothing was left unjudged: the case does not test what it means to")
			}
		})
	}
}
