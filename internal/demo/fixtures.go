package demo

// This file holds the fixture tools of the official MCP conformance suite
// (@modelcontextprotocol/conformance, src/scenarios/server/tasks/*.ts and
// src/scenarios/server/stateless.ts), offered with Options.Conformance (`mcptask demo serve
// --conformance`). Each scenario names the tools it needs and what they must do; the comments
// below quote that.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// fixtureTools are the conformance fixtures, in tools/list order. greet comes first: the
// suite's http-header-validation scenario calls the first listed tool with no arguments.
var fixtureTools = []tool{
	// "greet — sync-only, returns "Hello, {name}!"" (tasks-lifecycle).
	{Name: "greet", Description: "Conformance fixture: say hello at once (never a task).",
		Schema:  `{"type":"object","properties":{"name":{"type":"string","description":"who to greet","default":"World"}}}`,
		Fixture: true},
	// "slow_compute — task-supporting, seconds-second sleep then a result. seconds: 0 for the
	// immediate path. MUST settle to cancelled when tasks/cancel arrives while running."
	{Name: "slow_compute", Description: "Conformance fixture: compute for a number of seconds as a task.",
		Schema:      `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":3600,"default":1},"label":{"type":"string"}}}`,
		TaskSupport: "optional", Fixture: true},
	// "failing_job — task-supporting, always returns a tool execution error after ~1s", and
	// (tasks-required-task-error) "registered with task support declared as required".
	{Name: "failing_job", Description: "Conformance fixture: a task that ends with a tool error (isError).",
		Schema: `{"type":"object","properties":{}}`, TaskSupport: "required", Fixture: true},
	// "protocol_error_job — task-supporting, panics into a protocol error."
	{Name: "protocol_error_job", Description: "Conformance fixture: a task that fails with a JSON-RPC error.",
		Schema: `{"type":"object","properties":{}}`, TaskSupport: "optional", Fixture: true},
	// "confirm_delete — task-supporting, emits a single elicitation/create inputRequest then
	// completes when the response arrives."
	{Name: "confirm_delete", Description: "Conformance fixture: ask for confirmation, then (pretend to) delete a file.",
		Schema:      `{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`,
		TaskSupport: "optional", Fixture: true},
	// "multi_input — task-supporting, fans out two elicitation/create inputRequests in
	// parallel so two keys are pending at once."
	{Name: "multi_input", Description: "Conformance fixture: ask two questions at once.",
		Schema: `{"type":"object","properties":{}}`, TaskSupport: "optional", Fixture: true},
	// "test_tool_with_task — registered with taskSupport=required. Round 1: returns
	// InputRequiredResult asking for user_name. Round 2: with the elicit response echoed back,
	// escalates to async and returns CreateTaskResult. The task's eventual result text MUST
	// contain the gathered user_name" (tasks-mrtr-composition).
	{Name: "test_tool_with_task", Description: "Conformance fixture: ask a name (multi round-trip input), then run a task that greets it.",
		Schema: `{"type":"object","properties":{}}`, TaskSupport: "required", Fixture: true, ModernOnly: true},
	// The diagnostic tools of server-stateless.
	{Name: "test_missing_capability", Description: "Conformance fixture: needs the sampling capability (-32021 without it).",
		Schema: `{"type":"object","properties":{}}`, Fixture: true, ModernOnly: true},
	{Name: "test_streaming_elicitation", Description: "Conformance fixture: answers on an SSE stream with an input request (never a server-to-client request).",
		Schema: `{"type":"object","properties":{}}`, Fixture: true, ModernOnly: true},
	{Name: "test_logging_tool", Description: "Conformance fixture: logs a line, only when the request set a log level.",
		Schema: `{"type":"object","properties":{}}`, Fixture: true, ModernOnly: true},
	// "List-changed-capable servers notify listen streams with toolsListChanged: true" /
	// "promptsListChanged: true" (sep-2575-server-sends-{tools,prompts}-list-changed-on-subscription):
	// the hooks that stand for a change of the list.
	{Name: "test_trigger_tool_change", Description: "Conformance fixture: announces a change of the tool list (notifications/tools/list_changed) on every subscriptions/listen stream that asked for toolsListChanged.",
		Schema: `{"type":"object","properties":{}}`, Fixture: true, ModernOnly: true},
	{Name: "test_trigger_prompt_change", Description: "Conformance fixture: announces a change of the prompt list (notifications/prompts/list_changed) on every subscriptions/listen stream that asked for promptsListChanged.",
		Schema: `{"type":"object","properties":{}}`, Fixture: true, ModernOnly: true},
}

func confirmDeleteRequest(filename string) json.RawMessage {
	return elicitForm(fmt.Sprintf("Delete %s?", displayName(filename)),
		map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Delete it", "default": false}}, "confirm")
}

func confirmDeleteResult(filename string, ans elicitAnswer) json.RawMessage {
	if ok, _ := ans.Content["confirm"].(bool); ans.Action == "accept" && ok {
		return textResult("Deleted "+displayName(filename)+" (not really: this is the demo server)", false)
	}
	return textResult("Kept "+displayName(filename), false)
}

func displayName(filename string) string {
	if filename == "" {
		return "the file"
	}
	return filename
}

func multiInputRequests() []taskInput {
	return []taskInput{
		{Key: "name", Request: elicitForm("What is your name?",
			map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "name")},
		{Key: "confirm", Request: elicitForm("Shall I go on?",
			map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Go on"}}, "confirm")},
	}
}

func multiInputResult(t *task) json.RawMessage {
	name, _ := decodeAnswer(t.answer("name")).Content["name"].(string)
	goOn, _ := decodeAnswer(t.answer("confirm")).Content["confirm"].(bool)
	return textResult(fmt.Sprintf("Hello, %s! Go on: %t.", name, goOn), false)
}

// fixtureStepLocked is the task work of the fixtures that run as tasks without input. It
// reports whether t is one of them.
func (s *Server) fixtureStepLocked(t *task, a toolArgs, fired bool) (time.Duration, bool) {
	switch t.Tool {
	case "slow_compute":
		seconds, n, step := s.computePlan(a)
		return s.countStepsLocked(t, fired, n, step, "computing: %d/%d", computeResult(a, seconds)), true
	case "failing_job":
		if fired {
			// A tool execution error: completed with isError in 2026-07-28 (EXT §Task
			// Execution Errors), failed in 2025-11-25.
			s.completeLocked(t, textResult("failing_job failed, as it always does", true), true)
		}
		return s.opts.StepDelay, true
	case "protocol_error_job":
		if fired {
			s.failLocked(t, &rpc.Error{Code: rpc.CodeInternalError, Message: "protocol_error_job: internal error, as asked"})
		}
		return s.opts.StepDelay, true
	case "test_tool_with_task":
		if fired {
			name, _ := decodeAnswer(t.answer("user_name")).Content["name"].(string)
			s.completeLocked(t, textResult("Hello, "+name+"! (the name was asked before the task started)", false), false)
		}
		return s.opts.StepDelay, true
	}
	return 0, false
}

// computePlan is slow_compute's plan: seconds of StepDelay in at most one step per second.
func (s *Server) computePlan(a toolArgs) (seconds float64, steps int, step time.Duration) {
	seconds = 1
	if a.Seconds != nil {
		seconds = *a.Seconds
	}
	return s.sleepPlan(toolArgs{Seconds: &seconds})
}

func computeResult(a toolArgs, seconds float64) json.RawMessage {
	label := a.Label
	if label == "" {
		label = "the job"
	}
	return textResult(fmt.Sprintf("Computed %s in %s seconds", label, fmtSeconds(seconds)), false)
}

func greetResult(a toolArgs) json.RawMessage {
	name := a.Name
	if name == "" {
		name = "World"
	}
	return textResult("Hello, "+name+"!", false)
}

// modernFixtureCall serves the fixtures whose tools/call needs more than "run inline or
// start a task": multi round-trip input before anything runs, and the diagnostic tools. It
// reports whether p named one of them.
func (s *Server) modernFixtureCall(ctx context.Context, r *modernReq, p callParams, a toolArgs) (any, *rpc.Error, bool) {
	switch p.Name {
	case "test_tool_with_task":
		ans, answered := p.InputResponses["user_name"]
		if !answered {
			if !r.caps.elicitation() {
				return nil, missingCapability(map[string]any{"elicitation": map[string]any{}}, "test_tool_with_task needs the elicitation capability to ask a name"), true
			}
			return inputRequired(map[string]json.RawMessage{"user_name": elicitForm("What is your name?",
				map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "name")}), nil, true
		}
		if p.RequestState == nil || !validConfirmState(*p.RequestState) {
			return nil, invalidParams("test_tool_with_task: requestState missing or not the one this server issued"), true
		}
		// C26-MRTR then EXT §Task Creation: the answer is in; the work goes on as a task, and
		// the MRTR requestState stays out of the task envelope.
		s.mu.Lock()
		t := s.newTaskLocked(rpc.EraModern, "", p.Name, p.Arguments, s.opts.TTL, r.caps.elicitation())
		t.Inputs = []taskInput{{Key: "user_name", Request: json.RawMessage(`{}`), Answer: ans}}
		s.persistLocked()
		res := s.modernTaskLocked(t)
		s.mu.Unlock()
		res["resultType"] = "task"
		addServerInfo(res)
		return res, nil, true
	case "test_missing_capability":
		// "If processing a request requires a capability the client did not include in
		// io.modelcontextprotocol/clientCapabilities, the server MUST return a
		// MissingRequiredClientCapabilityError (-32021)" with requiredCapabilities a
		// ClientCapabilities object.
		if !r.caps.declared(r.caps.Sampling) {
			return nil, missingCapability(map[string]any{"sampling": map[string]any{}}, "test_missing_capability needs the sampling capability"), true
		}
		if ans, ok := p.InputResponses["sample"]; ok {
			var cm struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(ans, &cm)
			return complete(rawMap(textResult("The model said: "+cm.Content.Text, false))), nil, true
		}
		req, _ := json.Marshal(map[string]any{"method": "sampling/createMessage", "params": map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello."}}},
			"maxTokens": 50,
		}})
		return inputRequired(map[string]json.RawMessage{"sample": req}), nil, true
	case "test_streaming_elicitation":
		// C26-HTTP §Receiving Messages: the server MUST NOT send JSON-RPC requests on any
		// stream; a question travels as an InputRequiredResult, here on an SSE response.
		if !r.caps.elicitation() {
			return nil, missingCapability(map[string]any{"elicitation": map[string]any{}}, "test_streaming_elicitation needs the elicitation capability"), true
		}
		if r.upgrade != nil {
			r.upgrade()
		}
		if ans, ok := p.InputResponses["confirm"]; ok {
			return complete(rawMap(confirmDeleteResult("the stream", decodeAnswer(ans)))), nil, true
		}
		return inputRequired(map[string]json.RawMessage{"confirm": confirmDeleteRequest("the stream")}), nil, true
	case "test_logging_tool":
		// C26-BASIC §_meta: without io.modelcontextprotocol/logLevel the server MUST NOT send
		// notifications/message for the request.
		if r.logLevel != "" && logLevelRank[r.logLevel] <= logLevelRank["info"] && r.out != nil {
			params, _ := json.Marshal(map[string]any{"level": "info", "logger": "mcptask-demo", "data": "test_logging_tool ran"})
			_ = r.out(&rpc.Message{JSONRPC: "2.0", Method: "notifications/message", Params: params})
		}
		return complete(rawMap(textResult("logged only if a log level was set", false))), nil, true
	case "test_trigger_tool_change", "test_trigger_prompt_change":
		// The diagnostic hooks of server-stateless: the list changes, and every listen stream
		// whose filter asked for that kind of change is told (C26-SUBS: never one that did
		// not, sep-2575-server-honors-notification-filter).
		what := "tool"
		s.mu.Lock()
		if p.Name == "test_trigger_tool_change" {
			s.lists.Tools++
		} else {
			s.lists.Prompts++
			what = "prompt"
		}
		s.notifyLocked()
		s.mu.Unlock()
		return complete(rawMap(textResult("the "+what+" list changed; subscribers that asked for it are told", false))), nil, true
	case "confirm_delete", "multi_input":
		if r.caps.tasks() {
			return nil, nil, false // a task asks (EXT §Task Update Requests)
		}
		// Without the extension the questions come first, by multi round-trip input
		// (C26-MRTR), and the tool then runs inline.
		qs := questions(p.Name, a)
		inputs := map[string]json.RawMessage{}
		t := &task{Tool: p.Name}
		for _, q := range qs {
			ans, ok := p.InputResponses[q.Key]
			if !ok {
				inputs[q.Key] = q.Request
			}
			t.Inputs = append(t.Inputs, taskInput{Key: q.Key, Request: q.Request, Answer: ans})
		}
		if len(inputs) > 0 {
			if !r.caps.elicitation() {
				return nil, missingCapability(map[string]any{"elicitation": map[string]any{}}, p.Name+" needs the elicitation capability"), true
			}
			return inputRequired(inputs), nil, true
		}
		if p.RequestState == nil || !validConfirmState(*p.RequestState) {
			return nil, invalidParams("%s: requestState missing or not the one this server issued", p.Name), true
		}
		return complete(rawMap(inputResult(t, a))), nil, true
	}
	return nil, nil, false
}

// inputRequired is a C26-MRTR InputRequiredResult carrying reqs and a signed requestState.
func inputRequired(reqs map[string]json.RawMessage) map[string]any {
	r := map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": confirmState()}
	addServerInfo(r)
	return r
}

// logLevelRank orders the LoggingLevel values (RFC 5424 severities, least severe first).
var logLevelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// conformanceCatalogue serves the prompt and resource methods the conformance suite's caching
// scenario lists: no prompts, no templates, one small text resource. Every list and read
// result carries the cache hints (C26 CacheableResult: ttlMs and cacheScope are required).
func (s *Server) conformanceCatalogue(r *modernReq) (any, *rpc.Error, bool) {
	if !s.opts.Conformance {
		return nil, nil, false
	}
	switch r.msg.Method {
	case "prompts/list":
		return cacheable(complete(map[string]any{"prompts": []any{}})), nil, true
	case "resources/templates/list":
		return cacheable(complete(map[string]any{"resourceTemplates": []any{}})), nil, true
	case "resources/list":
		return cacheable(complete(map[string]any{"resources": []any{map[string]any{
			"uri": readmeURI, "name": "readme", "title": "About the demo server", "mimeType": "text/plain",
		}}})), nil, true
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(r.msg.Params, &p)
		if p.URI != readmeURI {
			return nil, invalidParams("resources/read: no resource %q", p.URI), true
		}
		return cacheable(complete(map[string]any{"contents": []any{map[string]any{
			"uri": readmeURI, "mimeType": "text/plain",
			"text": "mcptask demo server, started with --conformance for the official MCP conformance suite.",
		}}})), nil, true
	}
	return nil, nil, false
}

const readmeURI = "demo://conformance/readme"

// Cache hints (C26 CacheableResult). Nothing the demo lists depends on who asks, so every
// hint is public; the lists never change while a server runs.
const (
	cacheTTL   = 5 * time.Minute
	cacheScope = "public"
)

// cacheable adds the cache hints to a list, read or discover result.
func cacheable(r map[string]any) map[string]any {
	r["ttlMs"] = cacheTTL.Milliseconds()
	r["cacheScope"] = cacheScope
	return r
}

// listRevisions counts the changes of the tool and prompt lists that test_trigger_tool_change
// and test_trigger_prompt_change announced. Guarded by Server.mu.
type listRevisions struct{ Tools, Prompts int }

// listFilter is the part of a subscriptions/listen filter (C26 SubscriptionFilter) about list
// changes.
type listFilter struct {
	ToolsListChanged   bool `json:"toolsListChanged"`
	PromptsListChanged bool `json:"promptsListChanged"`
}

// honoredLists is the part of f the server honours: with Options.Conformance, whose discovery
// declares tools.listChanged and prompts.listChanged, all of it; else nothing (the plain
// demo's lists never change, and C26 SubscriptionsAcknowledgedNotification: the
// acknowledgement "only includes notification types the server actually supports").
func (s *Server) honoredLists(f listFilter) listFilter {
	if !s.opts.Conformance {
		return listFilter{}
	}
	return f
}

// ack adds the honoured list-change types to an acknowledgement's notifications.
func (f listFilter) ack(n map[string]any) {
	if f.ToolsListChanged {
		n["toolsListChanged"] = true
	}
	if f.PromptsListChanged {
		n["promptsListChanged"] = true
	}
}

// listChangesLocked returns the list_changed notifications due on a subscription with filter
// f that last saw the revisions *seen, and brings *seen up to date.
func (s *Server) listChangesLocked(f listFilter, seen *listRevisions) []string {
	var out []string
	if f.ToolsListChanged && s.lists.Tools != seen.Tools {
		out = append(out, "notifications/tools/list_changed")
	}
	if f.PromptsListChanged && s.lists.Prompts != seen.Prompts {
		out = append(out, "notifications/prompts/list_changed")
	}
	*seen = s.lists
	return out
}
