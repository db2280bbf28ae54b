package cmd

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestPollSurvivesRetryAfterAndSilence puts a faulty proxy in front of the demo server: the
// first tasks/get gets 503 with Retry-After: 1, the second is never answered. The wait must
// honour Retry-After, give up on the silent request by itself, and still finish the task.
func TestPollSurvivesRetryAfterAndSilence(t *testing.T) {
	old := requestTimeout
	requestTimeout = 300 * time.Millisecond
	defer func() { requestTimeout = old }()

	srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	inner := srv.Handler()
	var mu sync.Mutex
	var gets []time.Time
	release := make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"method":"tasks/get"`) {
			mu.Lock()
			gets = append(gets, time.Now())
			n := len(gets)
			mu.Unlock()
			switch n {
			case 1:
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			case 2:
				select { // never answer; the client must give up on its own
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	defer close(release)

	r := runCLI(t, t.Context(), nil, "call", "sleep", "--arg", "seconds=2", "--server", proxy.URL+"/mcp", "--timeout", "30s")
	if r.Code != ExitOK || !strings.Contains(r.Stdout, "slept") {
		t.Fatalf("code %d\nstdout %q\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gets) < 3 {
		t.Fatalf("only %d tasks/get", len(gets))
	}
	if gap := gets[1].Sub(gets[0]); gap < time.Second {
		t.Errorf("the poll after a 503 with Retry-After: 1 came %s later; it must wait at least 1s", gap)
	}
	if !strings.Contains(r.Stderr, "HTTP 503") || !strings.Contains(r.Stderr, "retrying") {
		t.Errorf("the failures are not shown:\n%s", r.Stderr)
	}
}
