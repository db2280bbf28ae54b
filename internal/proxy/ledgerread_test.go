package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/ledger"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/state"
)

// TestUnknownTaskStatusReadsNoLedger plays a server that floods the proxy with status
// notifications for tasks it does not hold: the ledger is read once, when the first such
// task is seen, and the rest are answered from memory. The proof is a ledger that cannot be
// read or written after that first read: 2,000 statuses of unknown tasks try nothing (no
// notice), while a status of the task the ledger did hold still tries to write it.
func TestUnknownTaskStatusReadsNoLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	srv := state.Server{URL: "http://127.0.0.1:1/mcp"}
	st := state.Open(path)
	if err := st.Put(state.Record{TaskID: "known", Server: srv, Status: "working", Era: "2025-11-25", CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	p := New(Options{Server: srv, Ledger: ledger.New(st, ledger.Options{}), OnEvent: func(ev Event) {
		if ev.Kind == EventNotice {
			mu.Lock()
			notices = append(notices, ev.Text)
			mu.Unlock()
		}
	}})
	h := p.hostFor("h", "host")
	p.taskSeen(h, &rpc.Task{TaskID: "unknown-first", Status: rpc.StatusCompleted}, "push")
	// From here on the ledger is a directory: any read or write of it fails with a notice.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		p.taskSeen(h, &rpc.Task{TaskID: "unknown-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String(), Status: rpc.StatusCompleted}, "push")
	}
	mu.Lock()
	n := len(notices)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("statuses of unknown tasks touched the ledger: %q", notices[:min(n, 3)])
	}
	p.taskSeen(h, &rpc.Task{TaskID: "known", Status: rpc.StatusCompleted}, "push")
	mu.Lock()
	defer mu.Unlock()
	if len(notices) == 0 || !strings.Contains(notices[0], "known") {
		t.Fatalf("the ledger's own task was not written (notices %q): the test proves nothing", notices)
	}
}
