package check

import (
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/check/checktest"
	"github.com/mcptask/mcptask/internal/conformance"
)

// agreement pairs a check of the official conformance suite with the checker's rule that
// judges the same thing, and says how each must judge a server with the fault.
type agreement struct {
	fault    checktest.Fault
	scenario string
	suiteID  string
	suite    string // the suite's status: FAILURE, WARNING or SUCCESS
	rule     string // the checker's rule (2026-07-28)
	status   Status
	// why is set where the two disagree on purpose: the spec sentence the checker follows.
	why string
}

var agreements = []agreement{
	// The clean server: both pass.
	{checktest.Clean, "tasks-lifecycle", "sep-2663-result-type-task-on-create", "SUCCESS", "B24", Pass, ""},
	{checktest.Clean, "tasks-lifecycle", "sep-2663-tool-error-uses-completed-status", "SUCCESS", "B27", Pass, ""},
	{checktest.Clean, "tasks-lifecycle", "sep-2663-tasks-get-status-failed", "SUCCESS", "B26", Pass, ""},
	{checktest.Clean, "tasks-lifecycle", "sep-2663-cancel-ack-empty-result", "SUCCESS", "B28", Pass, ""},
	{checktest.Clean, "tasks-lifecycle", "tasks-cancel-terminal-idempotent-ack", "SUCCESS", "B28c", Pass, ""},
	{checktest.Clean, "tasks-capability-negotiation", "tasks-extension-advertised", "SUCCESS", "B31a", Pass, ""},
	{checktest.Clean, "tasks-capability-negotiation", "sep-2663-tasks-methods-non-declaring", "SUCCESS", "B30", Pass, ""},
	{checktest.Clean, "tasks-capability-negotiation", "sep-2663-server-rejects-undeclared-client", "SUCCESS", "B22", Pass, ""},
	{checktest.Clean, "tasks-required-task-error", "sep-2663-server-returns-missing-capability-when-required", "SUCCESS", "B22b", Pass, ""},
	{checktest.Clean, "tasks-wire-fields", "tasks-wire-field-renames", "SUCCESS", "B24", Pass, ""},
	{checktest.Clean, "tasks-wire-fields", "tasks-no-early-ttl-expiry", "SUCCESS", "B38", Pass, ""},
	{checktest.Clean, "caching", "sep-2549-tools-list-caching-hints", "SUCCESS", "B17e", Pass, ""},
	{checktest.Clean, "caching", "sep-2549-prompts-list-caching-hints", "SUCCESS", "B17e", Pass, ""},
	{checktest.Clean, "caching", "sep-2549-resources-list-caching-hints", "SUCCESS", "B17e", Pass, ""},
	{checktest.Clean, "caching", "sep-2549-resources-templates-list-caching-hints", "SUCCESS", "B17e", Pass, ""},
	{checktest.Clean, "server-stateless", "sep-2575-http-server-header-mismatch-400", "SUCCESS", "B21b", Pass, ""},
	{checktest.Clean, "server-stateless", "sep-2575-server-unsupported-version-error", "SUCCESS", "B20", Pass, ""},
	{checktest.Clean, "server-stateless", "sep-2575-http-server-method-not-found-404-ping", "SUCCESS", "B21c", Pass, ""},
	{checktest.Clean, "server-stateless", "sep-2575-request-meta-invalid-missing-client-capabilities", "SUCCESS", "B19", Pass, ""},
	{checktest.Clean, "server-stateless", "sep-2575-server-identifies-in-result-meta", "SUCCESS", "B17c", Pass, ""},

	// One fault each: both find it.
	{checktest.NestedCreate, "tasks-lifecycle", "sep-2663-result-type-task-on-create", "FAILURE", "B24", Fail, ""},
	{checktest.IsErrorFlipped, "tasks-lifecycle", "sep-2663-tool-error-uses-completed-status", "FAILURE", "B27", Fail, ""},
	{checktest.FailedNoError, "tasks-lifecycle", "sep-2663-tasks-get-status-failed", "FAILURE", "B26", Fail, ""},
	{checktest.CancelEnvelope, "tasks-lifecycle", "sep-2663-cancel-ack-empty-result", "FAILURE", "B28", Fail, ""},
	{checktest.DiscoverLegacyCaps, "tasks-capability-negotiation", "tasks-extension-advertised", "FAILURE", "B31a", Fail, ""},
	{checktest.NoExtensionGate, "tasks-capability-negotiation", "sep-2663-tasks-methods-non-declaring", "FAILURE", "B30", Fail, ""},
	{checktest.TaskWithoutExt, "tasks-capability-negotiation", "sep-2663-server-rejects-undeclared-client", "FAILURE", "B22", Fail, ""},
	{checktest.RequiredWrongCode, "tasks-required-task-error", "sep-2663-server-returns-missing-capability-when-required", "FAILURE", "B22b", Fail, ""},
	{checktest.NoTTL, "tasks-wire-fields", "tasks-wire-field-renames", "FAILURE", "B24", Fail, ""},
	{checktest.ListNoCacheHints, "caching", "sep-2549-tools-list-caching-hints", "FAILURE", "B17e", Fail, ""},
	{checktest.PromptsNoCacheHints, "caching", "sep-2549-prompts-list-caching-hints", "FAILURE", "B17e", Fail, ""},
	{checktest.ResourcesNoCacheHints, "caching", "sep-2549-resources-list-caching-hints", "FAILURE", "B17e", Fail, ""},
	{checktest.TemplatesNoCacheHints, "caching", "sep-2549-resources-templates-list-caching-hints", "FAILURE", "B17e", Fail, ""},
	{checktest.VersionHeaderCode, "server-stateless", "sep-2575-http-server-header-mismatch-400", "FAILURE", "B21b", Fail, ""},
	{checktest.AnyVersion, "server-stateless", "sep-2575-server-unsupported-version-error", "FAILURE", "B20", Fail, ""},
	{checktest.PingAnswered, "server-stateless", "sep-2575-http-server-method-not-found-404-ping", "FAILURE", "B21c", Fail, ""},
	{checktest.MetaNotRequired, "server-stateless", "sep-2575-request-meta-invalid-missing-client-capabilities", "FAILURE", "B19", Fail, ""},
	{checktest.DiscoverNoServerInfo, "server-stateless", "sep-2575-server-identifies-in-result-meta", "WARNING", "B17c", Warn, ""},

	// Where they differ on purpose, the checker follows the spec.
	{checktest.CancelFinishedError, "tasks-lifecycle", "tasks-cancel-terminal-idempotent-ack", "FAILURE", "B28c", Warn,
		`EXT §Task Cancellation defines cancel of a task that is working; it says nothing of a finished one (2025-11-25 even requires -32602 there), so an error is allowed: a warning, since clients such as the suite expect the ack`},
	{checktest.EarlyExpiry, "tasks-wire-fields", "tasks-no-early-ttl-expiry", "FAILURE", "B38", Warn,
		`EXT-SCHEMA Task.ttlMs: "the server MAY discard the task after ttlMs" (and EXT §Task Polling: a server MAY mark it failed once the TTL has passed); no sentence forbids discarding it earlier, so the checker warns`},
	{checktest.MissingCapNoData, "tasks-required-task-error", "sep-2663-server-returns-missing-capability-data-shape", "INFO", "B22b", Fail,
		`EXT §Capability Negotiation: "the server MUST return an error with the code -32021 (Missing Required Client Capability), indicating the required extension in the error response"; C26-SCHEMA MissingRequiredClientCapabilityError requires data.requiredCapabilities (the suite reads it as a SHOULD of SEP-2575)`},
	{checktest.HalfModern, "tasks-capability-negotiation", "tasks-extension-advertised", "FAILURE", "B17b", Warn,
		`extensions are optional in 2026-07-28 (C26-VER §Extension Negotiation), so a server without the tasks extension breaks no 2026-07-28 rule; SEP-2663's "legacy tasks capabilities are not advertised" is worth a warning, as issue 16 asks`},
}

// What the checker says agrees with the official conformance suite, check by check, on the
// same deliberately broken servers (which offer the suite's fixture tools); where they differ,
// the table says which spec sentence the checker follows.
func TestAgreesWithTheConformanceSuite(t *testing.T) {
	suite := conformance.Find(t)
	type key struct {
		fault    checktest.Fault
		scenario string
	}
	type runs struct {
		suite map[string]string
		check map[string]Status
	}
	got := map[key]*runs{}
	byFault := map[checktest.Fault]map[string]Status{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	var keys []key
	for _, a := range agreements {
		k := key{a.fault, a.scenario}
		if got[k] == nil {
			got[k] = &runs{}
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		rs := got[k]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := checktest.Start(t, checktest.Options{Fault: k.fault, Tools: checktest.Conformance, PollMs: 100})
			res := suite.Server(t, k.scenario, "", s.URL)
			m := map[string]string{}
			for _, c := range res.Checks {
				if m[c.ID] == "" || m[c.ID] == "SUCCESS" {
					m[c.ID] = c.Status
				}
			}
			mu.Lock()
			rs.suite = m
			mu.Unlock()
		}()
	}
	var faults []checktest.Fault
	for _, a := range agreements {
		if byFault[a.fault] == nil {
			byFault[a.fault] = map[string]Status{}
			faults = append(faults, a.fault)
		}
	}
	for _, f := range faults {
		m := byFault[f]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := checktest.Start(t, checktest.Options{Fault: f, Tools: checktest.Conformance, PollMs: 100})
			rep := Run(t.Context(), Options{HTTP: true, Connect: connector(s.URL), Budget: 40 * time.Second})
			mu.Lock()
			for _, r := range rep.Results {
				if r.Era == "2026-07-28" {
					m[r.ID] = r.Status
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, a := range agreements {
		name := string(a.fault)
		if name == "" {
			name = "clean"
		}
		t.Run(name+"/"+a.suiteID, func(t *testing.T) {
			if s := got[key{a.fault, a.scenario}].suite[a.suiteID]; s != a.suite {
				t.Errorf("the suite's %s (%s) is %q, want %s", a.suiteID, a.scenario, s, a.suite)
			}
			if s := byFault[a.fault][a.rule]; s != a.status {
				t.Errorf("the checker's %s is %q, want %s", a.rule, s, a.status)
			}
		})
	}
}
