package output

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// signalWriter records what is written and tells when a line containing want arrived.
type signalWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestRemoteTableWritesEachPage: a page source that blocks after its first page (a server
// still sending the second) has the first page's rows, under the heading, written already;
// a broken writer that holds the rows until the list ends never writes them.
func TestRemoteTableWritesEachPage(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &signalWriter{want: "first-1", seen: make(chan struct{})}
	table := Listing{WithRemote: true, Server: "http://127.0.0.1:1/mcp"}.RemoteTable(w, now)
	more := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		if err := table.Page([]*rpc.Task{{TaskID: "first-0", Status: "working", CreatedAt: now}, {TaskID: "first-1", Status: "working", CreatedAt: now}}); err != nil {
			done <- err
			return
		}
		<-more // the second page has not arrived
		done <- table.Page([]*rpc.Task{{TaskID: "second-0", Status: "completed", CreatedAt: now}})
	}()
	select {
	case <-w.seen:
	case err := <-done:
		t.Fatalf("ended before the second page: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the first page's rows were not written while the list went on")
	}
	w.mu.Lock()
	got := w.b.String()
	w.mu.Unlock()
	if !strings.HasPrefix(got, "ON THE SERVER (http://127.0.0.1:1/mcp)\nID") || strings.Contains(got, "second-0") {
		t.Fatalf("after the first page:\n%s", got)
	}
	close(more)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.b.String(); strings.Count(got, "ON THE SERVER") != 1 || !strings.Contains(got, "second-0") {
		t.Errorf("after the second page, want one heading and its row:\n%s", got)
	}
}
