package demo

// This file holds the demo's fault switch: a deliberate defect the demo can be started with, so
// that a test can prove `mcptask check` catches a fault on the reference server itself, not only
// on internal/check/checktest's. The zero Fault is the conformant demo; no command line sets
// one (only Options, in tests).

import "github.com/mcptask/mcptask/internal/rpc"

// Fault names one deliberate defect of the demo server.
type Fault string

const (
	// FaultNone is the conformant demo.
	FaultNone Fault = ""
	// FaultUndeclaredExtension leaves the io.modelcontextprotocol/tasks extension out of
	// server/discover, while still serving tasks to a client that declares it (EXT §Capability
	// Negotiation: hosts that follow the spec then never use them).
	FaultUndeclaredExtension Fault = "undeclared-extension"
	// FaultToolErrorFailed ends a 2026-07-28 task whose tool reported an error (isError) as
	// failed with a JSON-RPC error, where EXT §Task Execution Errors wants completed with the
	// CallToolResult; the same tool run without a task still returns isError: true.
	FaultToolErrorFailed Fault = "tool-error-failed"
)

// toolErrorAsFailure says whether a tool error of t ends failed with a JSON-RPC error instead
// (FaultToolErrorFailed), and the error it then carries.
func (s *Server) toolErrorAsFailure(t *task) (*rpc.Error, bool) {
	if s.opts.Fault != FaultToolErrorFailed || t.Era != rpc.EraModern {
		return nil, false
	}
	return &rpc.Error{Code: rpc.CodeInternalError, Message: "the tool reported an error"}, true
}
