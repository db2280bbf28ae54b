package hostile

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/demo"
)

// TestStartRecordsWhatTheClientSent: the recorder is what every attacker test relies on to say
// what mcptask gave away, so it must see headers and bodies exactly.
func TestStartRecordsWhatTheClientSent(t *testing.T) {
	Register(Mode{Name: "test-passthrough", Doc: "passes everything to the demo",
		Wrap: func(_ *Server, next http.Handler) http.Handler { return next }})
	s := Start(t, "test-passthrough", demo.Options{})
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`))
	req.Header.Set("X-Secret", "s3cr3t-value")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !s.Saw("s3cr3t-value") || !s.Saw("server/discover") || s.Saw("never-sent") {
		t.Fatalf("recorder: %+v", s.Requests())
	}
}
