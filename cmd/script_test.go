package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/ci/citest"
	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/spectest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts pins the CI contract with testscript: each script in testdata/script runs the
// real mcptask against a demo server on loopback ($SERVER), with its own ledger, no TTY.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../testdata/script",
		Setup: func(env *testscript.Env) error {
			srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			if err != nil {
				return err
			}
			// Every message either side sends is checked against the spec's schemas (when
			// they are there; CI always has them).
			var h http.Handler = srv.Handler()
			rec := &spectest.Recorder{Next: h}
			if dir, err := spectest.SpecDir(); err == nil {
				if rec.V, err = spectest.New(dir); err != nil {
					return err
				}
				h = rec
			} else if os.Getenv("CI") != "" {
				return err
			}
			// Every tools/call that reaches the server is counted, for the scripts that prove
			// that nothing was sent (toolcalls).
			calls := new(atomic.Int64)
			env.Values[toolCallsKey{}] = calls
			h = countToolCalls(h, calls)
			hs := httptest.NewServer(h)
			env.Defer(func() {
				hs.Close()
				srv.Close()
				if errs := rec.Errors(); len(errs) > 0 {
					env.T().Fatal("messages that do not match the spec schema:\n" + strings.Join(errs, "\n"))
				}
			})
			env.Setenv("SERVER", hs.URL+"/mcp")
			// Addresses that are no MCP server: a web server answering 404, one serving its
			// home page, a JSON API of another kind, and a port nothing listens on.
			notFound := httptest.NewServer(http.NotFoundHandler())
			page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, "<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>")
			}))
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"status":"ok","version":"3.1"}`)
			}))
			closed := httptest.NewServer(http.NotFoundHandler())
			closed.Close()
			env.Defer(notFound.Close)
			env.Defer(page.Close)
			env.Defer(api.Close)
			env.Setenv("JSONAPI", api.URL+"/mcp")
			env.Setenv("NOTFOUND", notFound.URL+"/mcp")
			env.Setenv("WEBPAGE", page.URL+"/mcp")
			env.Setenv("CLOSED", closed.URL+"/mcp")
			env.Setenv("MCPTASK_STATE", filepath.Join(env.WorkDir, "state", "tasks.json"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "xdg-state"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv(exitLogEnv, os.Getenv(exitLogEnv)) // the exit codes the scripts see (exitlog_test.go)
			return nil
		},
		// [root]: the script runs as root, for whom a directory's mode bits do not stop a write.
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// toolcalls N: the demo server has received exactly N tools/call requests so far in
			// this script.
			"toolcalls": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: toolcalls N")
				}
				want, err := strconv.ParseInt(args[0], 10, 64)
				if err != nil {
					ts.Fatalf("toolcalls: bad count %q", args[0])
				}
				if got := ts.Value(toolCallsKey{}).(*atomic.Int64).Load(); got != want {
					ts.Fatalf("the server received %d tools/call requests, want %d", got, want)
				}
			},
			// jsonlines TYPE...: every line of stdout is a JSON object with a "type", and the
			// types seen, in order and without repeats in a row, are exactly TYPE... (when given).
			"jsonlines": func(ts *testscript.TestScript, neg bool, args []string) {
				var seen []string
				for _, line := range strings.Split(strings.TrimSpace(ts.ReadFile("stdout")), "\n") {
					var ev struct {
						Type string `json:"type"`
					}
					if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type == "" {
						ts.Fatalf("stdout line is not a JSON event: %q", line)
					}
					if len(seen) == 0 || seen[len(seen)-1] != ev.Type {
						seen = append(seen, ev.Type)
					}
				}
				if got, want := strings.Join(seen, " "), strings.Join(args, " "); len(args) > 0 && got != want {
					ts.Fatalf("event types %q, want %q", got, want)
				}
			},
			// ghrunner FILE...: read the files as GitHub's runner reads a job log
			// (internal/ci/citest) and fail if it would run any command that is not one of
			// mcptask's own (log groups, and annotations titled "mcptask: …"). The commands
			// it runs become stdout, one "cmd props::data" a line, for the next assertions.
			"ghrunner": func(ts *testscript.TestScript, neg bool, args []string) {
				var r citest.Runner
				for _, name := range args {
					r.Reset() // each file is a stream of its own
					r.Feed(ts.ReadFile(name))
				}
				for _, tok := range r.Stops {
					if !strings.HasPrefix(tok, "mcptask-") {
						ts.Fatalf("the runner would pause its commands for a token mcptask did not write: %q", tok)
					}
				}
				if r.Stopped() {
					ts.Fatalf("the log ends inside a stop-commands block")
				}
				for _, c := range r.Ran {
					own := c.Cmd == "group" || c.Cmd == "endgroup" ||
						(c.Cmd == "error" || c.Cmd == "warning" || c.Cmd == "notice") && strings.HasPrefix(c.Props["title"], "mcptask: ")
					if !own {
						ts.Fatalf("the runner would run a command mcptask did not write: %+v", c)
					}
					fmt.Fprintf(ts.Stdout(), "%s title=%s::%s\n", c.Cmd, c.Props["title"], c.Data)
				}
			},
			// glrunner FILE...: read the files as GitLab's job log (internal/ci/citest) and fail
			// on any section marker that is not mcptask's, or a section without exactly one
			// start and one end.
			"glrunner": func(ts *testscript.TestScript, neg bool, args []string) {
				var g citest.GitLab
				for _, name := range args {
					g.Feed(ts.ReadFile(name))
				}
				seen := map[string]string{}
				for _, m := range g.Markers {
					if !strings.HasPrefix(m.Name, "mcptask_") {
						ts.Fatalf("GitLab would act on a section marker mcptask did not write: %+v", m)
					}
					seen[m.Name] += m.Action + " "
				}
				for name, acts := range seen {
					if acts != "start end " {
						ts.Fatalf("section %s: markers %q, want one start and one end", name, acts)
					}
				}
			},
			// exits CODE command args...: run the command and require exactly that exit code
			// (stdout and stderr are kept for the next assertions).
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits CODE command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: bad code %q", args[0])
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("exits: %v", err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("exit code %d, want %d\nstderr: %s", got, want, ts.ReadFile("stderr"))
				}
			},
		},
	})
}

// toolCallsKey holds a script's count of the tools/call requests its demo server received.
type toolCallsKey struct{}

// countToolCalls passes every request on to next, counting the JSON-RPC tools/call requests
// among them in n.
func countToolCalls(next http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
				n.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}
