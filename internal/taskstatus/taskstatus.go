// Package taskstatus is the one place that says which task statuses are final. Every layer
// needs the answer: the transport (rpc), the ledger (state), the engine, the proxy, the
// checker and the views; and how each status looks to a person (Look). The views may not
// import rpc (it talks to the network) nor state (it touches files), so the words live here,
// in a package that imports nothing, and rpc.TaskStatus.Terminal and state.Record.Terminal
// ask it.
package taskstatus

// The five statuses of both protocol generations (C25-TASKS §Task Status, EXT §Task Status).
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// Expired is not a spec status: it is mcptask's word for a task that is gone from its
// server, because the server answered that it no longer knows it or its TTL ran out
// (state.Record.Expired, ExpiredAt). The ledger, the views and the exit codes show it where a
// status stands, but no server ever sends it.
const Expired = "expired"

// Terminal reports whether s is a terminal status of the spec: "completed, failed and
// cancelled are terminal: no further transition is allowed" (C25-TASKS §Task Status; the
// TasksExtension keeps the same diagram).
func Terminal(s string) bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Over reports whether nothing more will happen to a task mcptask shows with status s: it
// reached a terminal status, or it expired. This is mcptask's own notion, for views and
// tables that list expired tasks beside the others; the protocol's is Terminal.
func Over(s string) bool {
	return Terminal(s) || s == Expired
}
