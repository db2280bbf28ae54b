package follow

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcptask/mcptask/internal/elicit"
	"github.com/mcptask/mcptask/internal/rpc"
)

// Kind says what an Event reports.
type Kind uint8

// The kinds of events, in roughly the order a task's life produces them.
const (
	// KindCreated: a task this run created (Target.Created). Task is the CreateTaskResult's.
	KindCreated Kind = iota + 1
	// KindStatus: the first look at a task, or a change of its status or statusMessage. Task
	// is the task as the server sent it, Via how it came, Next and Interval when the next poll
	// is due, Requests the questions it waits on.
	KindStatus
	// KindPolled: a poll (or a push) that changed nothing a person would see. It carries the
	// new schedule, so a view can count down to the next poll and a log can beat its heart.
	KindPolled
	// KindInput: the questions the task waits on changed without its status changing (a
	// 2025-11-25 question arrived or was answered, a key was answered). Requests lists the
	// ones not answered yet.
	KindInput
	// KindAnswered: answers were sent. Keys are the input request keys answered.
	KindAnswered
	// KindCancelRequested: the server acknowledged a tasks/cancel (Cancel). On 2026-07-28 the
	// task may still complete or fail (EXT §Task Cancellation).
	KindCancelRequested
	// KindError: a request failed. Op names it ("poll", "cancel", "answer", "result");
	// Transient means the follow goes on, the next poll in RetryIn after Failures failures in
	// a row. A failure that ends the follow comes as KindResult with Outcome.Err instead.
	KindError
	// KindResult: the follow of the task is over, for whatever reason: Outcome says how. It is
	// the last event of a task.
	KindResult
	// KindPushUp: a 2026-07-28 listen stream reports Acked of the Asked tasks of Server.
	KindPushUp
	// KindPushDown: the listen stream of Server dropped; its tasks are polled until it is back.
	KindPushDown
	// KindProgress: a notifications/progress (Progress, Total, Message). 2025-11-25 servers
	// send real progress beside statusMessage (C25-PROG), with the token of the tools/call
	// that created the task (Target.ProgressToken) for the task's whole life; any server may
	// send it on a tools/call's stream before the call answers, when TaskID is empty.
	KindProgress
	// KindNote: a remark for whoever watches (Message), such as a question no answer was
	// given for being cancelled.
	KindNote
)

// Via says how an update reached the engine.
type Via string

// The ways an update comes.
const (
	ViaPoll Via = "poll"
	ViaPush Via = "push"
)

// Event is one thing the engine reports. Which fields are set depends on Kind; TaskID,
// Server and Time always are (TaskID is empty for an event about a whole server). Events of
// one task come in the order they happened; a task's last event is its KindResult.
type Event struct {
	Kind   Kind
	Time   time.Time
	TaskID string
	Tool   string
	// Server names the task's server as a person knows it (a URL, "stdio:cmd"); Era is the
	// generation it is followed in.
	Server string
	Era    rpc.Era

	// Task is the task as last seen.
	Task *rpc.Task
	Via  Via
	// Next is when the next poll is due (zero when none will come), Interval the delay in
	// use and Source why it has that value ("server's", "default", "your --interval", or a
	// backoff).
	Next     time.Time
	Interval time.Duration
	Source   string
	// Requests are the questions the task waits on that are not answered yet.
	Requests []Request

	// Keys are the input keys answered (KindAnswered).
	Keys []string

	// Op, Err, Transient, Failures and RetryIn describe a failed request (KindError).
	Op        string
	Err       error
	Transient bool
	Failures  int
	RetryIn   time.Duration

	// Outcome is how the follow ended (KindResult).
	Outcome *Outcome

	// Acked and Asked count the tasks a listen stream reports (KindPushUp).
	Acked, Asked int

	// Progress, Total and Message are a progress notification's (KindProgress); Message is
	// also a KindNote's text.
	Progress float64
	Total    *float64
	Message  string
}

// Sink consumes the engine's events: the plain progress printer, --jsonl, the --json
// envelope, the live view. Event is called for every event, one at a time and in order, on
// the goroutine that produced it: a sink must return quickly (a slow consumer buffers or
// coalesces on its own side) and may send the engine commands.
type Sink interface {
	Event(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Event calls f(ev).
func (f SinkFunc) Event(ev Event) { f(ev) }

// End says why the follow of a task ended.
type End uint8

// The ends of a follow.
const (
	// EndResult: the task completed or failed; Result (a CallToolResult) or RPCError (its
	// JSON-RPC error) holds the outcome, unless Options.LeaveResults left it for later.
	EndResult End = iota + 1
	// EndCancelled: the task was cancelled.
	EndCancelled
	// EndInputRequired: the task waits for input nothing here could give (Requests).
	EndInputRequired
	// EndExpired: the server no longer knows the task (expired, or lost it).
	EndExpired
	// EndStillRunning: Options.Once looked once and the task is not finished.
	EndStillRunning
	// EndTimeout: Options.Timeout elapsed; the task keeps running.
	EndTimeout
	// EndInterrupted: the run's context ended (SIGINT, SIGTERM); the task keeps running.
	EndInterrupted
	// EndDetached: Stop was called (the person left the live view); the task keeps running.
	EndDetached
	// EndError: following failed (Err): a refused or malformed answer, a server that cannot
	// be reached (Unreachable), a bad answer given for a question (an *AnswerError).
	EndError
)

// Outcome is how the follow of one task ended.
type Outcome struct {
	TaskID string
	Tool   string
	Server string
	Era    rpc.Era
	End    End
	// Task is the task as last seen (nil when the server was never reached and the ledger
	// knew nothing).
	Task *rpc.Task
	// Result is the task's CallToolResult (EndResult).
	Result *rpc.ToolResult
	// RPCError is the JSON-RPC error the task failed with (EndResult), as tasks/result
	// (C25-TASKS §Result Retrieval) or the inline error (EXT §Task Polling) gave it.
	RPCError *rpc.Error
	// Requests are the questions left unanswered (EndInputRequired).
	Requests []Request
	// Err is what ended the follow early (EndError, EndExpired, and the context's error for
	// EndTimeout, EndInterrupted and EndDetached).
	Err error
	// Unreachable is set when the task's server could not be reached at all.
	Unreachable bool
}

// Request is one question a task asks, in either era: a 2026-07-28 inputRequests entry, or a
// 2025-11-25 server-to-client request (elicitation/create, sampling/createMessage) that
// arrived while tasks/result was open (C25-TASKS §Input Required Status).
type Request struct {
	// TaskID is the task that asks; empty for a multi-round-trip tools/call, which asks
	// before there is a task.
	TaskID string
	// Tool and Server are the tool the task runs and its server, as a person knows them.
	Tool, Server string
	// Key identifies the question: the inputRequests key; for 2025-11-25, "elicitation" or
	// "sampling" for an Answerer, and a key the engine makes up ("question-1", ...) for the
	// listener, so that an Answer can name it.
	Key string
	// Legacy marks a 2025-11-25 question: an elicitation's answer is looked up as
	// "elicitation".
	Legacy bool
	// Method is the request's method; Params its params as sent (message, mode, url,
	// requestedSchema).
	Method string
	Params json.RawMessage
}

// requestsOf lists the inputRequests entries of t whose keys are not in answered, by key, each
// with the Tool and Server of about.
func requestsOf(t *rpc.Task, answered map[string]bool, about Request) []Request {
	if len(t.InputRequests) == 0 {
		return nil
	}
	var out []Request
	for _, k := range inputOrder(t) {
		if answered[k] {
			continue
		}
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(t.InputRequests[k], &r)
		out = append(out, Request{TaskID: t.TaskID, Tool: about.Tool, Server: about.Server, Key: k, Method: r.Method, Params: r.Params})
	}
	return out
}

// inputOrder lists the keys of t's inputRequests in the order the server wrote them (the
// order a person is asked them in), read from the task as received; keys it cannot place
// come last, sorted.
func inputOrder(t *rpc.Task) []string {
	var out []string
	for _, k := range elicit.Order(t.Raw, "inputRequests") {
		if _, ok := t.InputRequests[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range sortedKeys(t.InputRequests) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
