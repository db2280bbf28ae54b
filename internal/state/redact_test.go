package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/redact"
)

// A record is written without the credentials that reached it: a server URL's credential
// parameters, and a secret of the run that the server echoed into its strings.
func TestRecordsAreRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	st := Open(path).Redacting(redact.New([]string{"X-Team"}, "team-secret-42"))
	r := Record{TaskID: "t1", Server: Server{URL: "https://h/mcp?token=url-secret-1&tenant=a", HeaderNames: []string{"X-Team"}},
		Era: "2026-07-28", Tool: "echo", Status: "working", CreatedAt: time.Now(),
		StatusMessage: "saw team-secret-42 and Authorization: Bearer bearer-secret-3", LastError: `{"refresh_token":"rt-secret-4"}`}
	if err := st.Put(r); err != nil {
		t.Fatal(err)
	}
	if err := st.Patch(Server{URL: "https://h/mcp?token=url-secret-1&tenant=a"}.Key(), "t1", func(r *Record) { r.LastError = "Post https://h/mcp?api_key=url-secret-5: refused" }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"url-secret-1", "team-secret-42", "bearer-secret-3", "rt-secret-4", "url-secret-5"} {
		if strings.Contains(string(b), s) {
			t.Errorf("ledger holds %s:\n%s", s, b)
		}
	}
	recs, err := st.Find("t1")
	if err != nil || len(recs) != 1 || recs[0].Server.URL != "https://h/mcp?token=[redacted]&tenant=a" || !strings.Contains(recs[0].LastError, "refused") {
		t.Errorf("find: %v %+v", err, recs)
	}
}
