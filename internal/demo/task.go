package demo

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/mcptask/mcptask/internal/rpc"
)

// task is one task of either era. Everything but the unexported fields is persisted.
type task struct {
	ID        string          `json:"id"`
	Era       rpc.Era         `json:"era"`
	Session   string          `json:"session,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Status    rpc.TaskStatus  `json:"status"`
	Message   string          `json:"message,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
	// TTLMs is the retention in ms from CreatedAt; nil is unlimited.
	TTLMs *int64 `json:"ttlMs"`
	// Step is how far the work has got; a restarted server continues from here.
	Step int `json:"step"`
	// Result is the CallToolResult of a finished tool (also for isError results).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error of a tool that failed at the JSON-RPC level.
	Error *rpc.Error `json:"error,omitempty"`
	// Inputs are the input requests the task asked, in the order asked, with the answers the
	// client gave. A key is never reused for another request over the task's lifetime (EXT
	// §Task Update Requests).
	Inputs []taskInput `json:"inputs,omitempty"`
	// CancelRequested is a modern tasks/cancel not yet acted upon (cancel is cooperative there).
	CancelRequested bool `json:"cancelRequested,omitempty"`
	// Elicitation records whether the creating client could answer elicitation requests.
	Elicitation bool `json:"elicitation,omitempty"`
	// ProgressToken is the _meta.progressToken of the 2025-11-25 tools/call that created the
	// task, which stays in use for the task's whole life (MCP 2025-11-25, Progress).
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`

	wake     chan struct{} // nudges the worker: cancel requested, answer arrived, purged
	inFlight bool          // a legacy tasks/result stream is carrying an elicitation
	gone     bool          // purged after its TTL
}

// taskInput is one input request of a task: the key of inputRequests (modern), the
// {method, params} object, and the client's answer once it came.
type taskInput struct {
	Key     string          `json:"key"`
	Request json.RawMessage `json:"request"`
	Answer  json.RawMessage `json:"answer,omitempty"`
}

// pendingLocked returns the input requests still waiting for an answer.
func (t *task) pendingLocked() []*taskInput {
	var out []*taskInput
	for i := range t.Inputs {
		if t.Inputs[i].Answer == nil {
			out = append(out, &t.Inputs[i])
		}
	}
	return out
}

// answer returns the answer given for key, or nil.
func (t *task) answer(key string) json.RawMessage {
	for _, in := range t.Inputs {
		if in.Key == key {
			return in.Answer
		}
	}
	return nil
}

// tool describes one demo tool for tools/list and for dispatch.
type tool struct {
	Name        string
	Description string
	Schema      string
	// TaskSupport is the legacy execution.taskSupport ("" means absent, i.e. forbidden). In
	// 2026-07-28, where the flag does not exist, "required" still means the tool cannot run
	// without a task: a client that did not declare the extension gets -32021.
	TaskSupport string
	// Fixture marks the fixture tools of the official conformance suite, listed only by a
	// server started with Options.Conformance.
	Fixture bool
	// ModernOnly tools exist only in 2026-07-28: they rely on multi round-trip input or on
	// per-request capabilities.
	ModernOnly bool
}

// tools are the demo tools, in tools/list order.
var tools = []tool{
	{Name: "echo", Description: "Return the given text immediately.",
		Schema: `{"type":"object","properties":{"text":{"type":"string","description":"text to echo"}},"required":["text"]}`},
	{Name: "sleep", Description: "Sleep for a number of seconds as a task, reporting each step in the status message.",
		Schema:      `{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":3600,"default":3,"description":"how long to sleep"},"steps":{"type":"integer","minimum":1,"maximum":3600,"description":"number of status updates (default: one per second)"}}}`,
		TaskSupport: "optional"},
	{Name: "fail", Description: "Fail with a JSON-RPC error after one step.",
		Schema: `{"type":"object","properties":{"message":{"type":"string","description":"error message"}}}`, TaskSupport: "optional"},
	{Name: "tool_error", Description: "Return a tool error (isError: true) after one step.",
		Schema: `{"type":"object","properties":{"message":{"type":"string","description":"error text"}}}`, TaskSupport: "optional"},
	{Name: "ask", Description: "Ask for your name through an elicitation form, then greet you.",
		Schema: `{"type":"object","properties":{"question":{"type":"string","description":"question to ask instead of the default"}}}`, TaskSupport: "required"},
	{Name: "forever", Description: "Work forever, ticking the status message, until cancelled.",
		Schema: `{"type":"object","properties":{}}`, TaskSupport: "required"},
	{Name: "confirm", Description: "Ask for confirmation before starting (2026-07-28 multi round-trip input), then run one step.",
		Schema: `{"type":"object","properties":{}}`},
	{Name: "deploy", Description: "Ask to confirm a deployment, one question per target under a key made up at run time (confirm-<8 hex digits>), then say whether it deployed.",
		Schema:      `{"type":"object","properties":{"targets":{"type":"integer","minimum":1,"maximum":10,"default":1,"description":"how many targets to deploy to, each confirmed by a question of its own"}}}`,
		TaskSupport: "required"},
	progressTool,
}

// toolList returns the tools a server offers in era: the demo tools, and with
// Options.Conformance the conformance fixtures first (the suite calls the first listed tool
// with no arguments, which greet accepts).
func (s *Server) toolList(era rpc.Era) []*tool {
	var out []*tool
	if s.opts.Conformance {
		for i := range fixtureTools {
			if era == rpc.EraModern || !fixtureTools[i].ModernOnly {
				out = append(out, &fixtureTools[i])
			}
		}
	}
	for i := range tools {
		out = append(out, &tools[i])
	}
	return out
}

// toolsListed renders the tools of era for tools/list: execution.taskSupport exists only in
// 2025-11-25.
func (s *Server) toolsListed(era rpc.Era) []any {
	list := []any{}
	for _, t := range s.toolList(era) {
		e := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": json.RawMessage(t.Schema)}
		if era == rpc.EraLegacy && t.TaskSupport != "" {
			e["execution"] = map[string]any{"taskSupport": t.TaskSupport}
		}
		list = append(list, e)
	}
	return list
}

// findTool returns the tool called name that the server offers in era, or nil.
func (s *Server) findTool(name string, era rpc.Era) *tool {
	for _, t := range s.toolList(era) {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// toolArgs are the arguments of all tools, decoded leniently.
type toolArgs struct {
	Text     *string  `json:"text"`
	Seconds  *float64 `json:"seconds"`
	Steps    *int     `json:"steps"`
	Message  string   `json:"message"`
	Question string   `json:"question"`
	Targets  *int     `json:"targets"`
	// The conformance fixtures' arguments.
	Name     string `json:"name"`
	Label    string `json:"label"`
	Filename string `json:"filename"`
}

// parseArgs decodes and checks arguments; the error is a -32602 for the caller.
func parseArgs(name string, raw json.RawMessage) (toolArgs, *rpc.Error) {
	var a toolArgs
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			return a, invalidParams("invalid arguments for %s: %v", name, err)
		}
	}
	switch name {
	case "echo":
		if a.Text == nil {
			return a, invalidParams("echo: missing required argument text")
		}
	case "sleep", "slow_compute":
		if a.Seconds != nil && (math.IsNaN(*a.Seconds) || *a.Seconds < 0 || *a.Seconds > 3600) {
			return a, invalidParams("%s: seconds must be between 0 and 3600", name)
		}
		if a.Steps != nil && (*a.Steps < 1 || *a.Steps > 3600) {
			return a, invalidParams("sleep: steps must be between 1 and 3600")
		}
	case "progress":
		if a.Steps != nil && (*a.Steps < 1 || *a.Steps > 600) {
			return a, invalidParams("progress: steps must be between 1 and 600")
		}
	case "deploy":
		if a.Targets != nil && (*a.Targets < 1 || *a.Targets > 10) {
			return a, invalidParams("deploy: targets must be between 1 and 10")
		}
	}
	return a, nil
}

// sleepPlan returns the number of steps and the length of one step of a sleep.
func (s *Server) sleepPlan(a toolArgs) (seconds float64, steps int, step time.Duration) {
	seconds = 3
	if a.Seconds != nil {
		seconds = *a.Seconds
	}
	steps = int(math.Ceil(seconds))
	if a.Steps != nil {
		steps = *a.Steps
	}
	if steps < 1 {
		steps = 1
	}
	total := time.Duration(seconds * float64(s.opts.StepDelay))
	return seconds, steps, total / time.Duration(steps)
}

// sleepIsLong reports whether a sleep takes more than one step, which a modern client that
// cannot handle tasks is refused (it would block the request too long).
func (s *Server) sleepIsLong(a toolArgs) bool {
	seconds, _, _ := s.sleepPlan(a)
	return seconds > 1
}

func textResult(text string, isError bool) json.RawMessage {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	b, _ := json.Marshal(r)
	return b
}

func fmtSeconds(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

func sleepDone(seconds float64) string {
	if seconds == 1 {
		return "slept 1 second"
	}
	return "slept " + fmtSeconds(seconds) + " seconds"
}

// failError is the JSON-RPC error of the fail tool.
func failError(a toolArgs) *rpc.Error {
	msg := a.Message
	if msg == "" {
		msg = "the fail tool failed, as asked"
	}
	return &rpc.Error{Code: rpc.CodeInternalError, Message: msg}
}

func toolErrorText(a toolArgs) string {
	if a.Message != "" {
		return a.Message
	}
	return "the tool_error tool reported an error, as asked"
}

// elicitForm is an elicitation/create request (form mode) as an inputRequests entry: the
// {method, params} object both eras carry (the 2025-11-25 request is sent with its params).
func elicitForm(message string, properties map[string]any, required ...string) json.RawMessage {
	schema := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		schema["required"] = required
	}
	b, _ := json.Marshal(map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{"mode": "form", "message": message, "requestedSchema": schema},
	})
	return b
}

// questions are the input requests a tool asks when it starts, keyed.
func questions(name string, a toolArgs) []taskInput {
	switch name {
	case "ask":
		q := a.Question
		if q == "" {
			q = "What is your name?"
		}
		// The ask tool asks exactly once, under "name".
		return []taskInput{{Key: "name", Request: elicitForm(q,
			map[string]any{"name": map[string]any{"type": "string", "title": "Name"}}, "name")}}
	case "confirm_delete":
		return []taskInput{{Key: "confirm", Request: confirmDeleteRequest(a.Filename)}}
	case "multi_input":
		return multiInputRequests()
	case "deploy":
		return deployQuestions(a)
	}
	return nil
}

// deployQuestions are the questions of the deploy tool: one per target, all asking for the
// same field, each under a key made up now (confirm-<8 hex digits>), which a client cannot know
// before it asks the task. Keys are never reused (EXT §Task Update Requests), and are kept with
// the task, so a restarted server asks the same ones.
func deployQuestions(a toolArgs) []taskInput {
	n := 1
	if a.Targets != nil {
		n = *a.Targets
	}
	out := make([]taskInput, 0, n)
	for i := range n {
		msg := "Deploy now?"
		if n > 1 {
			msg = fmt.Sprintf("Deploy to target %d of %d?", i+1, n)
		}
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		out = append(out, taskInput{Key: "confirm-" + hex.EncodeToString(b), Request: elicitForm(msg,
			map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Deploy"}}, "confirm")})
	}
	return out
}

// deployResult says whether the deploy tool deployed: only when every question was accepted
// with confirm true.
func deployResult(t *task) json.RawMessage {
	for _, in := range t.Inputs {
		if ans := decodeAnswer(in.Answer); ans.Action != "accept" || ans.Content["confirm"] != true {
			return textResult("not deployed", false)
		}
	}
	return textResult("deployed", false)
}

// elicitAnswer is an ElicitResult.
type elicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

func decodeAnswer(raw json.RawMessage) elicitAnswer {
	var a elicitAnswer
	_ = json.Unmarshal(raw, &a)
	return a
}

// inputResult is the CallToolResult of an input tool once every question was answered.
func inputResult(t *task, a toolArgs) json.RawMessage {
	switch t.Tool {
	case "confirm_delete":
		return confirmDeleteResult(a.Filename, decodeAnswer(t.answer("confirm")))
	case "multi_input":
		return multiInputResult(t)
	case "deploy":
		return deployResult(t)
	}
	ans := decodeAnswer(t.answer("name"))
	if ans.Action != "accept" {
		return textResult("You declined to give your name; nothing to greet.", false)
	}
	name, _ := ans.Content["name"].(string)
	if name == "" {
		name = "stranger"
	}
	return textResult("Hello, "+name+"!", false)
}

// timestamp formats t as RFC 3339 UTC with milliseconds.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// newTaskLocked creates a task in working and starts its work. It is stored (and persisted)
// before the caller answers, so a tasks/get right after the CreateTaskResult succeeds
// (EXT §Task Creation: strong consistency).
func (s *Server) newTaskLocked(era rpc.Era, sess, name string, args json.RawMessage, ttl time.Duration, elicitation bool) *task {
	now := s.opts.Now()
	t := &task{
		ID: uuid.NewString(), Era: era, Session: sess, Tool: name, Args: args,
		// C25-TASKS §Task Status Lifecycle: "Tasks MUST begin in the working status".
		Status:    rpc.StatusWorking,
		CreatedAt: now, UpdatedAt: now,
		Elicitation: elicitation,
		wake:        make(chan struct{}, 1),
	}
	if ttl >= 0 {
		ms := ttl.Milliseconds()
		t.TTLMs = &ms
	}
	a, _ := parseArgs(name, args)
	switch name {
	case "sleep":
		_, n, _ := s.sleepPlan(a)
		t.Message = fmt.Sprintf("step 0/%d", n)
	case "forever":
		t.Message = "started; runs until cancelled"
	case "slow_compute":
		_, n, _ := s.computePlan(a)
		t.Message = fmt.Sprintf("computing: 0/%d", n)
	default:
		t.Message = "started"
	}
	s.tasks[t.ID] = t
	s.persistLocked()
	s.notifyLocked()
	s.startLocked(t)
	return t
}

func (s *Server) startLocked(t *task) {
	if s.closed {
		return
	}
	s.wg.Add(1)
	go s.run(t)
}

// setStatusLocked moves t along the status graph. A terminal status never changes again
// (C25-TASKS §Task Status Lifecycle; EXT §Task Status); attempts are ignored.
func (s *Server) setStatusLocked(t *task, st rpc.TaskStatus, msg string) {
	if t.Status.Terminal() {
		return
	}
	t.Status = st
	t.Message = msg
	t.UpdatedAt = s.opts.Now()
	s.persistLocked()
	s.notifyLocked()
}

// completeLocked ends t with a CallToolResult. EXT §Task Execution Errors: in the modern era a
// result with isError stays "completed"; C25-TASKS §Task Execution Errors: in the legacy era
// it makes the task "failed".
func (s *Server) completeLocked(t *task, result json.RawMessage, isError bool) {
	if t.Status.Terminal() {
		return
	}
	if e, ok := s.toolErrorAsFailure(t); ok && isError {
		s.failLocked(t, e)
		return
	}
	t.Result = result
	switch {
	case isError && t.Era == rpc.EraLegacy:
		s.setStatusLocked(t, rpc.StatusFailed, "the tool reported an error")
	case isError:
		s.setStatusLocked(t, rpc.StatusCompleted, "finished with a tool error")
	default:
		s.setStatusLocked(t, rpc.StatusCompleted, "done")
	}
}

// failLocked ends t with a JSON-RPC error; both eras make that "failed".
func (s *Server) failLocked(t *task, e *rpc.Error) {
	if t.Status.Terminal() {
		return
	}
	t.Error = e
	s.setStatusLocked(t, rpc.StatusFailed, e.Message)
}

// wakeTask nudges t's worker without blocking.
func wakeTask(t *task) {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run is the worker of one task. It returns when the task is terminal, purged, or the server
// closes; on close it leaves the status alone so that a restart resumes the work.
func (s *Server) run(t *task) {
	defer s.wg.Done()
	fired := false
	for {
		s.mu.Lock()
		// A task past its TTL is purged even when nobody asks for it, so a forgotten forever
		// task does not run until the server stops.
		if t.gone || t.Status.Terminal() || s.expiredLocked(t) {
			s.mu.Unlock()
			return
		}
		if t.CancelRequested {
			// EXT §Task Cancellation: cancellation is cooperative; the work notices it here.
			s.setStatusLocked(t, rpc.StatusCancelled, "cancelled at the client's request")
			s.mu.Unlock()
			return
		}
		d, waitInput := s.stepLocked(t, fired)
		done := t.Status.Terminal()
		s.mu.Unlock()
		if done {
			return
		}
		fired = false
		if waitInput {
			select {
			case <-t.wake:
			case <-s.closing:
				return
			}
			continue
		}
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
			fired = true
		case <-t.wake:
			timer.Stop()
		case <-s.closing:
			timer.Stop()
			return
		}
	}
}

// stepLocked does the work that is due for t. fired says a full step has just elapsed. It
// returns how long to wait before the next call, or waitInput to wait for a wake-up only.
func (s *Server) stepLocked(t *task, fired bool) (d time.Duration, waitInput bool) {
	a, _ := parseArgs(t.Tool, t.Args)
	switch t.Tool {
	case "sleep":
		seconds, n, step := s.sleepPlan(a)
		return s.countStepsLocked(t, fired, n, step, "step %d/%d", textResult(sleepDone(seconds), false)), false
	case "forever":
		if fired {
			t.Step++
			s.setStatusLocked(t, rpc.StatusWorking, fmt.Sprintf("tick %d (runs until cancelled)", t.Step))
		}
		return s.opts.StepDelay, false
	case "fail":
		if fired {
			s.failLocked(t, failError(a))
		}
		return s.opts.StepDelay, false
	case "tool_error":
		if fired {
			s.completeLocked(t, textResult(toolErrorText(a), true), true)
		}
		return s.opts.StepDelay, false
	case "confirm":
		if fired {
			s.completeLocked(t, textResult("confirmed", false), false)
		}
		return s.opts.StepDelay, false
	case "ask", "confirm_delete", "multi_input", "deploy":
		return s.inputStepLocked(t, a, fired)
	}
	if d, ok := s.fixtureStepLocked(t, a, fired); ok {
		return d, false
	}
	s.failLocked(t, &rpc.Error{Code: rpc.CodeInternalError, Message: "unknown tool " + t.Tool})
	return 0, false
}

// countStepsLocked is the work of a tool that takes n steps of length step, saying how far it
// got in the status message (format gets the step and n), and then completes with result.
func (s *Server) countStepsLocked(t *task, fired bool, n int, step time.Duration, format string, result json.RawMessage) time.Duration {
	if fired {
		t.Step++
		if t.Step < n {
			s.setStatusLocked(t, rpc.StatusWorking, fmt.Sprintf(format, t.Step, n))
		}
	}
	if t.Step >= n {
		s.completeLocked(t, result, false)
		return 0
	}
	return step
}

// inputStepLocked is the work of a tool that needs input (ask, deploy, confirm_delete, multi_input):
// ask every question at once, wait until all are answered, then finish one step later.
func (s *Server) inputStepLocked(t *task, a toolArgs, fired bool) (time.Duration, bool) {
	if len(t.Inputs) == 0 {
		if !t.Elicitation {
			// C25-TASKS §Input Required Status, C26-MRTR §Server Requirements: only a client
			// that declared elicitation can be asked; without it the question cannot be asked.
			s.failLocked(t, &rpc.Error{Code: rpc.CodeInternalError,
				Message: "elicitation is not available: the client did not declare the elicitation capability"})
			return 0, false
		}
		t.Inputs = questions(t.Tool, a)
		s.setStatusLocked(t, rpc.StatusInputRequired, "waiting for input")
		return 0, true
	}
	if len(t.pendingLocked()) > 0 {
		return 0, true
	}
	for _, in := range t.Inputs {
		if decodeAnswer(in.Answer).Action == "cancel" {
			s.setStatusLocked(t, rpc.StatusCancelled, "the question was cancelled")
			return 0, false
		}
	}
	if t.Status == rpc.StatusInputRequired {
		s.setStatusLocked(t, rpc.StatusWorking, "got every answer; finishing")
		return s.opts.StepDelay, false
	}
	if fired {
		s.completeLocked(t, inputResult(t, a), false)
		return 0, false
	}
	return s.opts.StepDelay, false
}

// answerLocked records the client's ElicitResult for t's outstanding input request. Answers
// for a key that is not outstanding are ignored (EXT §Task Update Requests: servers SHOULD
// ignore unknown or already answered keys).
func (s *Server) answerLocked(t *task, key string, ans json.RawMessage) {
	if t.Status != rpc.StatusInputRequired {
		return
	}
	for _, in := range t.pendingLocked() {
		if in.Key == key {
			in.Answer = ans
			s.persistLocked()
			// tasks/get shows the answered key gone at once (EXT §Task Update Requests allows
			// eventual consistency; the demo is immediate).
			s.notifyLocked()
			wakeTask(t)
			return
		}
	}
}

// lookupLocked returns a live task, purging it first when its TTL has passed (C25-TASKS §TTL
// and Resource Management: "receivers MAY delete the task and its results"; a later lookup
// then gets -32602, which is compliant).
func (s *Server) lookupLocked(id string) *task {
	t := s.tasks[id]
	if t == nil {
		return nil
	}
	if s.expiredLocked(t) {
		return nil
	}
	return t
}

func (s *Server) expiredLocked(t *task) bool {
	if t.TTLMs == nil || s.opts.Now().Before(t.CreatedAt.Add(time.Duration(*t.TTLMs)*time.Millisecond)) {
		return false
	}
	delete(s.tasks, t.ID)
	t.gone = true
	wakeTask(t)
	s.persistLocked()
	s.notifyLocked()
	return true
}

func invalidParams(format string, args ...any) *rpc.Error {
	return &rpc.Error{Code: rpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func taskNotFound(id string) *rpc.Error {
	return &rpc.Error{Code: rpc.CodeInvalidParams, Message: fmt.Sprintf("task not found: %q (unknown, expired, or created by another session)", id)}
}

// ttlMsValue renders a ttl for JSON: a number or null.
func ttlMsValue(t *task) any {
	if t.TTLMs == nil {
		return nil
	}
	return *t.TTLMs
}
