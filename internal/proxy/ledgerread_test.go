package proxy

import (
	"bufio"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
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

// TestHostStdioBoundsAHostLine: a --host-stdio host that writes a line longer than the
// proxy's frame bound (MaxInspect) has it dropped with a notice, unread and unsent, and the
// proxy goes on with the next line (a ping, answered).
func TestHostStdioBoundsAHostLine(t *testing.T) {
	d, err := demo.New(demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	hs := httptest.NewServer(d.Handler())
	t.Cleanup(hs.Close)
	var mu sync.Mutex
	var notices []string
	p := New(Options{MaxInspect: 64 << 10, OnEvent: func(ev Event) {
		if ev.Kind == EventNotice {
			mu.Lock()
			notices = append(notices, ev.Text)
			mu.Unlock()
		}
	}})
	defer p.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- p.RunHostStdio(t.Context(), HostStdioOptions{Upstream: hs.URL + "/mcp", In: inR, Out: outW})
	}()
	go func() {
		huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}` + "\n"
		_, _ = io.WriteString(inW, huge)
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
		if strings.Contains(sc.Text(), `"id":2`) {
			break
		}
	}
	_ = inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
		t.Fatalf("the host got %q; want only the answer to the ping after the huge line", got)
	}
	if !slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, "larger than 65536 bytes was dropped") }) {
		t.Fatalf("notices %q", notices)
	}
}
