package ci

import (
	"bytes"
	"strings"
	"testing"
)

// An annotation and a summary row never carry a credential a message quoted: a server URL's
// token, an OAuth member, a bearer.
func TestAnnotationAndSummaryRedact(t *testing.T) {
	var log, sum bytes.Buffer
	l := &Log{Sys: GitHub, W: &log}
	msg := `connect to https://h/mcp?token=url-secret-1: {"refresh_token":"rt-secret-2"} Authorization: Bearer bearer-secret-3`
	l.Annotation(Error, "mcptask: tool failed", msg)
	if err := WriteSummary(&sum, "call", []Row{{TaskID: "t1", Server: "https://h/mcp?api_key=url-secret-4", Outcome: "failed", Message: msg,
		Resume: "mcptask result t1 --server 'https://h/mcp?token=url-secret-1'"}}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{log.String(), sum.String()} {
		for _, s := range []string{"url-secret-1", "rt-secret-2", "bearer-secret-3", "url-secret-4"} {
			if strings.Contains(out, s) {
				t.Errorf("%s leaked:\n%s", s, out)
			}
		}
	}
}
