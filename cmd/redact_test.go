package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/hostile"
	"github.com/mcptask/mcptask/internal/redact"
	"github.com/mcptask/mcptask/internal/state"
)

// The user's own credentials in TestSecretsStayOutOfRecords: a bearer from the environment,
// a --header value, a token in the server URL's query.
const (
	userBearer = "user-bearer-4f7a19c2"
	userHeader = "user-header-9d3e5b81"
	userQuery  = "user-query-2c6a0f77"
	// userTenant is a --header whose name says no credential: its value is redacted where
	// headers are recorded, but not hunted in what a server echoes.
	userTenant = "user-tenant-51b2c9d0"
)

// TestSecretsStayOutOfRecords plays a server that sends secret-shaped members (results,
// _meta, error data, an escaped key), credential headers, and echoes the client's own
// credentials back into status messages and error data. mcptask runs against it in a GitHub
// job with --trace and --record, with a bearer, a --header and a token in the URL; then the
// proxy runs with --record and --trace in front of it. No secret of the user's appears in any
// file or stream, and none of the server's in any record: the trace, the record files, the
// ledger, the annotations and the job summary.
func TestSecretsStayOutOfRecords(t *testing.T) {
	ctx := context.Background()
	s := hostile.Start(t, "secrets-in-records", demo.Options{})
	dir := t.TempDir()
	server := s.URL + "?token=" + userQuery + "&tenant=acme"
	rec, summary := filepath.Join(dir, "client.ndjson"), filepath.Join(dir, "summary.md")
	env := map[string]string{"MY_TOKEN": userBearer, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}
	creds := []string{"--server", server, "--header", "X-Team-Key: " + userHeader, "--bearer-env", "MY_TOKEN", "--header", "X-Tenant: " + userTenant}
	var runs []cliResult

	r := runCLI(t, ctx, env, append([]string{"call", "sleep", "--arg", "seconds=1", "--trace", "--record", rec}, creds...)...)
	mustCode(t, r, ExitOK, "call")
	runs = append(runs, r)
	// An error answer carries error data; with --json it is printed on stderr.
	r = runCLI(t, ctx, env, append([]string{"get", "no-such-task", "--json", "--trace", "--record", rec}, creds...)...)
	runs = append(runs, r)
	// A task left running: its record, its annotation and summary row with the resume hint.
	r = runCLI(t, ctx, env, append([]string{"call", "sleep", "--arg", "seconds=30", "--timeout", "300ms", "--trace", "--record", rec}, creds...)...)
	mustCode(t, r, ExitTimeout, "call left running")
	runs = append(runs, r)
	if !s.Saw(userBearer) || !s.Saw(userHeader) || !s.Saw(userQuery) {
		t.Fatal("the server never got the credentials: the test proves nothing")
	}

	// The proxy, with the user's credentials for the upstream, and a host without any.
	proxyRec := filepath.Join(dir, "proxy.ndjson")
	endpoint, proxyErr := startProxy(t, testLedger(t), "--server", server, "--header", "X-Team-Key: "+userHeader,
		"--header", "Authorization: Bearer "+userBearer, "--record", proxyRec, "--trace")
	r = runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=1", "--server", endpoint)
	mustCode(t, r, ExitOK, "call through the proxy")
	runs = append(runs, r)
	waitFor(t, "the proxy to record the call", 10*time.Second, func() bool {
		b, _ := os.ReadFile(proxyRec)
		return strings.Contains(string(b), "tasks/result") || strings.Contains(string(b), `"completed"`)
	})

	files := map[string]string{}
	for name, p := range map[string]string{"client record": rec, "proxy record": proxyRec, "ledger": testLedger(t), "job summary": summary} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files[name] = string(b)
	}
	// The records did see what they must hide, redacted.
	for name, want := range map[string]string{"client record": "registration_access_token", "proxy record": "registration_access_token",
		"ledger": "token=" + redact.Mark, "job summary": "token=" + redact.Mark} {
		if !strings.Contains(files[name], want) || !strings.Contains(files[name], redact.Mark) {
			t.Errorf("%s lacks %q: it did not see the attack\n%s", name, want, files[name])
		}
	}
	for _, l := range strings.Split(files["client record"], "\n") {
		var line struct {
			Kind    string              `json:"kind"`
			Headers map[string][]string `json:"headers"`
		}
		if json.Unmarshal([]byte(l), &line) == nil && line.Kind == "http-request" {
			if v := line.Headers["X-Tenant"]; len(v) != 1 || v[0] != redact.Mark {
				t.Errorf("the record shows --header X-Tenant as %q", v)
			}
		}
	}
	if strings.Contains(runs[0].Stderr, "X-Tenant: "+userTenant) {
		t.Error("the trace shows the value of --header X-Tenant")
	}
	records := map[string]string{"proxy stderr (trace)": proxyErr.String()}
	for k, v := range files {
		records[k] = v
	}
	for i, r := range runs[:3] {
		records["stderr of run "+string(rune('1'+i))] = r.Stderr
	}
	// The host behind the proxy never had the user's credentials: a server that echoes what
	// the proxy added shows them to the host (out of scope: records, not relayed answers), but
	// the host's own log keeps none of the server's.
	for _, secret := range hostile.RedactSecrets() {
		if strings.Contains(runs[3].Stderr, secret) {
			t.Errorf("the host's stderr holds %s", secret)
		}
	}
	streams := map[string]string{}
	for i, r := range runs[:3] {
		streams["stdout of run "+string(rune('1'+i))] = r.Stdout
	}
	for name, text := range records {
		for _, secret := range append([]string{userBearer, userHeader, userQuery}, hostile.RedactSecrets()...) {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s", name, secret)
				if testing.Verbose() {
					for _, l := range strings.Split(text, "\n") {
						if strings.Contains(l, secret) {
							t.Logf("  %s", l)
						}
					}
				}
			}
		}
	}
	// stdout is the tool's result as the server sent it, but for the user's own credentials,
	// which the server echoed into it.
	for name, text := range streams {
		for _, secret := range []string{userBearer, userHeader, userQuery} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s", name, secret)
			}
		}
	}
	if !strings.Contains(runs[0].Stdout, "your credentials: ") {
		t.Errorf("the echo did not reach stdout: the test proves nothing\n%s", runs[0].Stdout)
	}
	if !strings.Contains(runs[0].Stderr, "::notice") || !strings.Contains(runs[2].Stderr, "::warning") {
		t.Errorf("no annotations were written:\n%s", runs[2].Stderr)
	}
}

// TestResumeAfterURLCredential: the ledger keeps a URL with its token redacted, and resume
// asks for the URL again rather than losing the task; given again, it finishes it.
func TestResumeAfterURLCredential(t *testing.T) {
	ctx := context.Background()
	s := hostile.Start(t, "secrets-in-records", demo.Options{})
	server := s.URL + "?token=" + userQuery
	r := runCLI(t, ctx, nil, "call", "sleep", "--arg", "seconds=1", "--detach", "--server", server)
	mustCode(t, r, ExitOK, "call --detach")
	id := strings.TrimSpace(r.Stdout)
	f, err := state.Open(testLedger(t)).Load()
	if err != nil || len(f.Tasks) != 1 || f.Tasks[0].Server.URL != s.URL+"?token="+redact.Mark {
		t.Fatalf("ledger: %v %+v", err, f)
	}
	r = runCLI(t, ctx, nil, "resume")
	if r.Code == ExitOK || !strings.Contains(r.Stderr, "give the full URL again with --server") || strings.Contains(r.Stderr+r.Stdout, userQuery) {
		t.Fatalf("resume without the URL: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if f, _ := state.Open(testLedger(t)).Load(); len(f.Tasks) != 1 || f.Tasks[0].TaskID != id {
		t.Fatalf("the record was lost: %+v", f)
	}
	r = runCLI(t, ctx, nil, "resume", "--server", server)
	mustCode(t, r, ExitOK, "resume with the URL given again")
	if !strings.Contains(r.Stdout, "slept") && !strings.Contains(r.Stdout, id) && r.Stdout == "" {
		t.Fatalf("resume printed no result:\n%s", r.Stderr)
	}
}
