package answerexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
	"github.com/mcptask/mcptask/internal/follow"
	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/spectest"
)

// script writes a shell script into a temporary directory and returns its Exec, its stderr
// going to errOut.
func script(t *testing.T, body string, errOut *bytes.Buffer) *Exec {
	t.Helper()
	path := filepath.Join(t.TempDir(), "answer.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	x, err := New(path, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if errOut != nil {
		x.Stderr = errOut
	}
	return x
}

// confirmQuestion is a question of the demo's deploy tool: an elicitation form asking for
// {confirm: boolean}, required.
func confirmQuestion() follow.Request {
	params := json.RawMessage(`{"mode":"form","message":"Deploy now?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`)
	return follow.Request{TaskID: "task-1", Tool: "deploy", Server: "http://srv/mcp", Key: "confirm-e6f21b98", Method: "elicitation/create", Params: params}
}

// TestExecEnvironmentGetsNoRawServerWords: a question whose related task id and key hold
// escape sequences and bidi controls (the server chose both) reaches the program exactly on
// stdin, but its environment gets neither raw: they are left out.
func TestExecEnvironmentGetsNoRawServerWords(t *testing.T) {
	dir := t.TempDir()
	x := script(t, `cat > "$DIR/stdin.json"
env | grep ^MCPTASK_ > "$DIR/env.txt"
echo '{"confirm": true}'
`, nil)
	x.Env = append(os.Environ(), "DIR="+dir)
	req := confirmQuestion()
	req.TaskID, req.Key = "task\x1b]0;pwned\x07", "confirm\u202e\x1b[2J"
	if _, ok, err := x.Answer(t.Context(), req); err != nil || !ok {
		t.Fatalf("Answer: %v %v", ok, err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env.txt"))
	if strings.Contains(string(env), "MCPTASK_TASK_ID") || strings.Contains(string(env), "MCPTASK_INPUT_KEY") || bytes.ContainsAny(env, "\x1b\u202e") {
		t.Errorf("environment: %q", env)
	}
	var in struct{ Key, TaskID string }
	data, _ := os.ReadFile(filepath.Join(dir, "stdin.json"))
	if err := json.Unmarshal(data, &in); err != nil || in.Key != req.Key || in.TaskID != req.TaskID {
		t.Errorf("stdin %q: %v", data, err)
	}
}

// TestExecStdinAndEnvironment: the program reads the question as one JSON document (key,
// method, params, taskId, tool, server) on stdin, finds the task and the key in its
// environment, and what it prints is the answer, checked and completed as an --answer is.
func TestExecStdinAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	x := script(t, `cat > "$DIR/stdin.json"
printf '%s %s' "$MCPTASK_TASK_ID" "$MCPTASK_INPUT_KEY" > "$DIR/env.txt"
echo '{"confirm": true}'
`, nil)
	x.Env = append(os.Environ(), "DIR="+dir)
	req := confirmQuestion()
	resp, ok, err := x.Answer(t.Context(), req)
	if err != nil || !ok {
		t.Fatalf("Answer: %v %v", ok, err)
	}
	if string(resp) != `{"action":"accept","content":{"confirm":true}}` {
		t.Errorf("response %s, want the content taken as an accepted elicitation", resp)
	}
	var in map[string]json.RawMessage
	data, _ := os.ReadFile(filepath.Join(dir, "stdin.json"))
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("stdin %q: %v", data, err)
	}
	for field, want := range map[string]string{"key": `"confirm-e6f21b98"`, "method": `"elicitation/create"`, "taskId": `"task-1"`, "tool": `"deploy"`, "server": `"http://srv/mcp"`, "params": string(req.Params)} {
		if string(in[field]) != want {
			t.Errorf("stdin %s = %s, want %s", field, in[field], want)
		}
	}
	if env, _ := os.ReadFile(filepath.Join(dir, "env.txt")); string(env) != "task-1 confirm-e6f21b98" {
		t.Errorf("environment: %q", env)
	}
}

// TestExecFailures: a program that fails, prints no JSON, prints an answer that does not fit,
// or runs past its timeout gives an *Error that names the key, the program and the problem,
// with the tail of its stderr; its stderr also passes through as it comes.
func TestExecFailures(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       []string
	}{
		{"non-zero exit", "echo 'first line' >&2\necho 'cannot reach the vault' >&2\nexit 3\n",
			[]string{"failed (exit status 3)", "its stderr ended with: first line | cannot reach the vault"}},
		{"invalid JSON", "echo 'yes please'\n", []string{"printed something that is not JSON: yes please"}},
		{"nothing printed", "exit 0\n", []string{"printed nothing"}},
		{"not an object", "echo '[true]'\n", []string{"want a JSON object"}},
		{"schema mismatch", `echo '{"confirm":"yes"}'` + "\n", []string{"does not fit the question", `field "confirm" must be true or false`}},
		{"a field the form lacks", `echo '{"action":"accept","content":{"confirm":true,"force":true}}'` + "\n", []string{`field "force" is not in the requested schema`}},
		{"bad action", `echo '{"action":"maybe"}'` + "\n", []string{`action "maybe" must be accept, decline or cancel`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var errOut bytes.Buffer
			x := script(t, tt.body, &errOut)
			resp, ok, err := x.Answer(t.Context(), confirmQuestion())
			var xe *Error
			if ok || resp != nil || !errors.As(err, &xe) {
				t.Fatalf("Answer = %s, %v, %v; want an *Error", resp, ok, err)
			}
			msg := err.Error()
			for _, want := range append(tt.want, "question confirm-e6f21b98 was not answered", x.Command()) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			var ae *follow.AnswerError
			if errors.As(err, &ae) {
				t.Errorf("the error wraps an *AnswerError, which the command layer makes a usage error: %v", err)
			}
			if strings.Contains(tt.body, ">&2") && !strings.Contains(errOut.String(), "cannot reach the vault\n") {
				t.Errorf("the program's stderr did not pass through: %q", errOut.String())
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		x, _ := New("no-such-program-here", []string{"no-such-program-here"})
		_, _, err := x.Answer(t.Context(), confirmQuestion())
		var xe *Error
		if !errors.As(err, &xe) || !strings.Contains(err.Error(), "could not run") {
			t.Fatalf("err %v", err)
		}
	})
	if _, err := New("", nil); err == nil {
		t.Error("New with no program: no error")
	}
}

// TestExecTimeout: a program that runs past its timeout is killed with its whole process
// group (a child it started goes too), and the question stays unanswered.
func TestExecTimeout(t *testing.T) {
	dir := t.TempDir()
	x := script(t, `sleep 30 &
echo $! > "$DIR/child.pid"
wait
echo '{"confirm":true}'
`, nil)
	x.Env = append(os.Environ(), "DIR="+dir)
	x.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, ok, err := x.Answer(t.Context(), confirmQuestion())
	var xe *Error
	if ok || !errors.As(err, &xe) || !strings.Contains(err.Error(), "did not finish within 300ms and was killed") {
		t.Fatalf("Answer: %v, %v", ok, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the timeout took %s", took)
	}
	data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to look for the child in")
	}
	// The kill is sent before Answer returns; the child may take a moment to be gone (or to
	// stay a zombie when nothing reaps orphans).
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || procState(stat) == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d outlived it: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procState is the state letter of a /proc/PID/stat line.
func procState(stat []byte) string {
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+3 <= len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// TestExecContextEnds: when the follow ends (interrupted) the program is killed and the
// context's error comes back, not an *Error: it is not the program's fault.
func TestExecContextEnds(t *testing.T) {
	x := script(t, "sleep 30\n", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, _, err := x.Answer(ctx, confirmQuestion())
	var xe *Error
	if errors.As(err, &xe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's", err)
	}
}

func jqExec(t *testing.T, filter string) *Exec {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed")
	}
	x, err := New("jq -c '"+filter+"'", []string{"jq", "-c", filter})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// demoServer starts the demo server on loopback behind a schema-validating recorder.
func demoServer(t *testing.T) (string, *spectest.Recorder) {
	t.Helper()
	srv, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &spectest.Recorder{V: spectest.Load(t), Next: srv.Handler()}
	hs := httptest.NewServer(rec)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		rec.Check(t)
	})
	return hs.URL + "/mcp", rec
}

// followTool follows a new task of tool on the demo in era with answerer a.
func followTool(t *testing.T, url, era, tool string, a follow.Answerer) (follow.Outcome, *rpc.Client) {
	t.Helper()
	e := follow.New(follow.Options{Answerer: a})
	s := e.Server(url, url)
	tr, err := rpc.NewHTTPTransport(url, rpc.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClient(tr, s.ClientOptions(rpc.ClientOptions{Protocol: era, Info: rpc.Implementation{Name: "answerexec-test", Version: "1"}}))
	if err := c.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	res, err := c.CallTool(t.Context(), rpc.CallParams{Name: tool})
	if err != nil || res.Task == nil {
		t.Fatalf("call %s: %v (%+v)", tool, err, res)
	}
	s.Follow(c, follow.Target{ID: res.Task.TaskID, Tool: tool, Task: res.Task})
	return e.Run(t.Context())[0], c
}

func count(methods []string, m string) int {
	n := 0
	for _, x := range methods {
		if x == m {
			n++
		}
	}
	return n
}

// TestExecAnswersThroughTheEngine: in a follow.Chain after the answers given by key, the
// program answers the demo's deploy question, whose key is made up at run time, in both eras:
// 2026-07-28 by tasks/update, 2025-11-25 as the response to elicitation/create.
func TestExecAnswersThroughTheEngine(t *testing.T) {
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t)
			x := jqExec(t, `{action:"accept",content:{confirm:(.key|startswith("confirm-") or . == "elicitation")}}`)
			o, _ := followTool(t, url, era, "deploy", follow.Chain{follow.Answers{"other": json.RawMessage(`{}`)}, x})
			if o.End != follow.EndResult || o.Result == nil || o.Result.Content[0].Text != "deployed" {
				t.Fatalf("outcome %+v", o)
			}
			if era == rpc.VersionModern && count(rec.Methods(), "tasks/update") != 1 {
				t.Errorf("want one tasks/update: %v", rec.Methods())
			}
		})
	}
}

// TestExecFailureSendsNothing: a program that fails leaves the question unanswered and the
// task as it was, in both eras; the follow ends with the *Error.
func TestExecFailureSendsNothing(t *testing.T) {
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		t.Run(era, func(t *testing.T) {
			url, rec := demoServer(t)
			x := script(t, "echo 'no, not today' >&2\nexit 1\n", &bytes.Buffer{})
			o, c := followTool(t, url, era, "deploy", x)
			var xe *Error
			if o.End != follow.EndError || !errors.As(o.Err, &xe) {
				t.Fatalf("outcome %+v", o)
			}
			if count(rec.Methods(), "tasks/update") != 0 {
				t.Errorf("something was answered: %v", rec.Methods())
			}
			got, err := c.GetTask(t.Context(), o.TaskID)
			if err != nil || got.Status != rpc.StatusInputRequired {
				t.Fatalf("the task after the failure: %+v, %v; want it still waiting", got, err)
			}
		})
	}
}

// TestExecSampling: a program can answer sampling/createMessage, so with one the engine
// declares sampling and hands a 2025-11-25 sampling request to it; answers given up front
// cannot, and sampling stays undeclared and refused.
func TestExecSampling(t *testing.T) {
	x := jqExec(t, `{role:"assistant",content:{type:"text",text:("about " + .params.messages[0].content.text)},model:"scripted"}`)
	s := follow.New(follow.Options{Answerer: follow.Chain{follow.Answers{"name": json.RawMessage(`{}`)}, x}}).Server("srv", "srv")
	opts := s.ClientOptions(rpc.ClientOptions{})
	if !opts.Sampling || !opts.Elicitation {
		t.Fatalf("sampling %v, elicitation %v: want both declared", opts.Sampling, opts.Elicitation)
	}
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"the weather"}}],"maxTokens":50}`)
	res, rerr := opts.OnRequest(t.Context(), "sampling/createMessage", params)
	if rerr != nil || !strings.Contains(string(res), `"text":"about the weather"`) {
		t.Fatalf("sampling answered %s, %v", res, rerr)
	}

	s = follow.New(follow.Options{Answerer: follow.Answers{"name": json.RawMessage(`{}`)}}).Server("srv", "srv")
	opts = s.ClientOptions(rpc.ClientOptions{})
	if opts.Sampling {
		t.Error("sampling declared without a program")
	}
	if _, rerr := opts.OnRequest(t.Context(), "sampling/createMessage", params); rerr == nil || rerr.Code != rpc.CodeMethodNotFound {
		t.Errorf("sampling without a program: %v, want -32601", rerr)
	}
}
