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

// TestModes lists the attacks (go test -run Modes -v) and holds the promise SECURITY.md makes:
// every class of the threat model is played by a mode of this server, or by a test that is not
// a server at all, named here with the reason.
func TestModes(t *testing.T) {
	notAServer := map[int]string{
		11: "the attacker reaches the demo itself: cmd/demo_test.go:TestDemoStaysOnLoopback",
		12: "the parties are a real OpenID provider and the official TypeScript SDK: cmd/oidc_test.go",
	}
	byClass := map[int][]string{}
	for _, m := range Modes() {
		if m.Class == 0 {
			continue // test support of this package
		}
		if m.Doc == "" || m.Wrap == nil {
			t.Errorf("mode %q has no Doc or no Wrap", m.Name)
		}
		byClass[m.Class] = append(byClass[m.Class], m.Name)
		t.Logf("class %2d  %-34s %s", m.Class, m.Name, m.Doc)
	}
	for class := 1; class <= 12; class++ {
		if len(byClass[class]) == 0 && notAServer[class] == "" {
			t.Errorf("class %d of the threat model has no hostile mode and no named test", class)
		}
		if len(byClass[class]) > 0 && notAServer[class] != "" {
			t.Errorf("class %d has modes now: drop it from notAServer", class)
		}
	}
}
