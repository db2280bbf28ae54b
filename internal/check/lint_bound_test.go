package check

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mcptask/mcptask/internal/rpc"
)

// TestLinterMemoryIsBounded: behind the proxy, a host flooding random task ids (each one a poll
// of a task nobody created, which the server refuses) must not grow the linter's memory
// without bound.
func TestLinterMemoryIsBounded(t *testing.T) {
	l := NewLinter(func(Violation) {})
	for i := range 3 * maxKeys {
		r := HostRequest{Host: "flood", Era: rpc.EraModern, Method: "tasks/get", TaskID: fmt.Sprintf("random-%d", i), HTTP: true,
			Header: http.Header{"Mcp-Method": {"tasks/get"}, "Mcp-Name": {fmt.Sprintf("random-%d", i)}}}
		l.ObserveHost(r)
		l.ObserveHostError(r, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown task"})
	}
	if len(l.seen) > maxKeys || len(l.lastPoll) > maxKeys {
		t.Fatalf("after %d random ids the linter remembers %d violations and %d polls; its bound is %d", 3*maxKeys, len(l.seen), len(l.lastPoll), maxKeys)
	}
}
