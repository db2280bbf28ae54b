// Package follow is the one engine that follows MCP tasks to their end. Every command that
// waits for tasks (call, result, watch, resume, cancel --wait) and every way of showing them
// (plain progress lines, --jsonl, the --json envelope, the live view) goes through it, so that
// cadence, push, backoff, batching and input answering exist once and behave the same
// everywhere. It exists because following used to live twice, in the command layer and in the
// live view, and every fix had to be made twice.
//
// It imports internal/rpc (to reach servers) and internal/state (to keep the ledger in step);
// it knows nothing of cobra, terminals or output formats.
//
// # Building and running
//
// An Engine is built with its Options and its sinks, given the tasks of each connection, and
// run:
//
//	e := follow.New(follow.Options{Ledger: store, Timeout: 10 * time.Minute}, printer, results)
//	srv := e.Server(ref.String(), key)                    // declared before connecting...
//	c, err := connect(ctx, srv.ClientOptions(base))     // ...so its hooks are in the client
//	srv.Follow(c, follow.Target{ID: id, Record: &rec})  // or srv.Unreachable(err, targets...)
//	outcomes := e.Run(ctx)                               // one Outcome per task, in order
//
// Per task the engine polls tasks/get at the server's interval (re-read on every answer,
// counted from when the previous poll went out, clamped to [100 ms, 60 s], never faster than
// Options.MinInterval), with due times aligned to shared ticks so that a thousand tasks wake
// the process a few dozen times a second. Failures worth retrying back off exponentially for
// every task of the server together, never sooner than a Retry-After; each poll has its own
// deadline; at most Options.MaxInFlight polls are in flight; with many tasks the first looks
// are spread over an interval. On 2026-07-28 a subscriptions/listen stream per connection
// brings updates by push, with polling relaxed as the safety net; on 2025-11-25 unsolicited
// notifications/tasks/status are taken the same way. Status changes, expiry and error marks,
// answered keys and dropped records go to the ledger in batches (Ledger).
//
// # Events
//
// The engine emits one stream of Events: KindCreated, KindStatus (a change, or the first
// look), KindPolled (nothing changed; the new schedule), KindInput (the questions waiting
// changed), KindAnswered, KindCancelRequested, KindError (a failed request; Transient when
// the follow goes on), KindPushUp and KindPushDown, KindProgress, KindNote, and per task a
// last KindResult carrying its Outcome. A task's events come in the order they happened.
//
// # Sinks
//
// A Sink consumes the stream. Sinks are called one event at a time, in order, on the
// engine's goroutines, so a sink must return quickly: a slow consumer (the live view draws at
// most one frame per tick whatever the number of events) coalesces on its own side. The
// command layer builds the sinks it needs (internal/tui's feed for the live view, the plain
// printer, --jsonl, --json) and gives them all to New. A new way of reporting is a new Sink
// and nothing else: a GitHub Actions job summary and annotations (KindResult outcomes, with
// their End), an --on-complete hook (run on KindResult), desktop or terminal notifications
// (KindResult, KindInput) all plug in there, without another path through the engine.
//
// # Commands
//
// While Run runs, Cancel(id) sends tasks/cancel, Answer(id, key, response) answers a question
// (tasks/update on 2026-07-28, the response to the waiting elicitation/create on 2025-11-25),
// and Stop detaches: every task not finished ends as EndDetached and keeps running. Commands
// return at once; their outcome comes back as events. They may be called from any goroutine,
// a sink's included.
//
// # Answering input
//
// A question (a 2026-07-28 inputRequests entry, or a 2025-11-25 elicitation/create or
// sampling/createMessage that arrives while tasks/result is kept open) goes first to
// Options.Answerer. Answers, the answers given with --answer and --answers (and "*" for
// --on-input decline), is one: by key, or by the names of the fields a question asks for;
// answerexec.Exec, a program run for each question (--on-input exec:'cmd', given the Request
// as JSON and printing the response), is another; Chain tries several in turn. Before any of
// a task's open questions is answered the Answerer is resolved against all of them
// (Resolver), so that an answer that fits two questions by their fields answers neither. A
// wrong answer (an Answerer's error) is never sent: the question stays open, the task as it
// was, and the follow ends with the error (EndError). A question no Answerer takes goes to
// whoever listens when Options.Listen is set (the live view, which answers with Answer), and
// otherwise ends the task's follow as EndInputRequired, its questions in the Outcome.
// Answered keys are remembered in the ledger and never answered twice. Another way of
// answering is another Answerer, slotted into the Chain in front of the listener without the
// engine changing.
//
// # Outcomes
//
// Run returns an Outcome per task: its End (EndResult with the CallToolResult or the task's
// JSON-RPC error, EndCancelled, EndInputRequired, EndExpired, EndStillRunning, EndTimeout,
// EndInterrupted, EndDetached, EndError), the task as last seen and what went wrong. The
// command layer maps outcomes to exit codes and messages; the engine only follows.
package follow
