// Package check is mcptask's server conformance checker: it exercises an MCP server's Tasks
// implementation and reports, rule by rule with the spec section each comes from, what the
// server got right and wrong. It is its own package because it is a different idea from the
// client: it sends deliberately wrong requests (a mismatched Mcp-Name, an unknown task id) and
// judges the answers, where the client only ever sends right ones and copes with the answers.
//
// The rules are those of PROTOCOL.md §6 that a client can observe. A rule that needs a
// behaviour the server's tools do not offer is reported as skipped, never as passed.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Status is the verdict of one check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Warn Status = "warn"
	Skip Status = "skip"
)

// Result is one check's verdict.
type Result struct {
	ID      string `json:"id"`
	Era     string `json:"era"`
	Title   string `json:"title"`
	Section string `json:"section"`
	Status  Status `json:"status"`
	Seen    string `json:"seen,omitempty"`
}

// Options say what to exercise.
type Options struct {
	// Connect opens a new client to the server in the given era ("2026-07-28" or
	// "2025-11-25"), already connected; it fails when the server does not speak that era.
	Connect func(ctx context.Context, era string) (*rpc.Client, error)
	// HTTP is true for a Streamable HTTP server (the header checks need it).
	HTTP bool
	// Tool and Args name the task tool to exercise; empty picks one.
	Tool string
	Args map[string]any
	// Wait bounds how long a task is followed to its end (60 s when zero).
	Wait time.Duration
}

// Run checks every era the server speaks.
func Run(ctx context.Context, o Options) []Result {
	if o.Wait <= 0 {
		o.Wait = 60 * time.Second
	}
	var out []Result
	for _, era := range []string{rpc.VersionModern, rpc.VersionLegacy} {
		c, err := o.Connect(ctx, era)
		if err != nil {
			out = append(out, Result{ID: "era", Era: era, Title: "server speaks " + era, Section: "C26-VER §Backward Compatibility", Status: Skip, Seen: short(err.Error())})
			continue
		}
		r := &runner{c: c, o: o, era: era}
		if era == rpc.VersionModern {
			r.modern(ctx)
		} else {
			r.legacy(ctx)
		}
		c.Close()
		out = append(out, r.results...)
	}
	return out
}

// Failed reports whether any check failed.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

type runner struct {
	c       *rpc.Client
	o       Options
	era     string
	results []Result
}

func (r *runner) add(id, title, section string, st Status, seen string, args ...any) {
	if len(args) > 0 {
		seen = fmt.Sprintf(seen, args...)
	}
	r.results = append(r.results, Result{ID: id, Era: r.era, Title: title, Section: section, Status: st, Seen: short(seen)})
}

// verdict adds pass when problem is "", else fail (or warn for a SHOULD).
func (r *runner) verdict(id, title, section string, problem string, should bool) {
	switch {
	case problem == "":
		r.add(id, title, section, Pass, "")
	case should:
		r.add(id, title, section, Warn, problem)
	default:
		r.add(id, title, section, Fail, problem)
	}
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		return s[:159] + "…"
	}
	return s
}

// obj decodes a JSON object into a map of raw fields.
func obj(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// pickTool chooses the tool to exercise: the one named, else one that supports tasks and needs
// no arguments (preferring a short sleep), plus optional tools for isError and long-running.
func (r *runner) pickTool(ctx context.Context) (main string, args map[string]any, errorTool, longTool string, err error) {
	tools, _, err := r.c.ListTools(ctx)
	if err != nil {
		return "", nil, "", "", err
	}
	byName := map[string]*rpc.Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	if _, ok := byName["tool_error"]; ok {
		errorTool = "tool_error"
	}
	if _, ok := byName["forever"]; ok {
		longTool = "forever"
	}
	if r.o.Tool != "" {
		if byName[r.o.Tool] == nil {
			return "", nil, "", "", fmt.Errorf("the server has no tool %q", r.o.Tool)
		}
		return r.o.Tool, r.o.Args, errorTool, longTool, nil
	}
	if _, ok := byName["sleep"]; ok {
		return "sleep", map[string]any{"seconds": 1}, errorTool, longTool, nil
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	for _, n := range names {
		t := byName[n]
		if t.TaskSupport() != "forbidden" && !requiresArgs(t.InputSchema) {
			return n, nil, errorTool, longTool, nil
		}
	}
	return "", nil, errorTool, longTool, errors.New("no tool that supports tasks and needs no arguments; name one with --tool and --args")
}

func requiresArgs(schema json.RawMessage) bool {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return len(s.Required) > 0
}

// transitions checks a sequence of observed statuses against the state machine, and that a
// terminal status never changes.
func transitions(seq []string) string {
	allowed := map[string][]string{
		"working":        {"working", "input_required", "completed", "failed", "cancelled"},
		"input_required": {"input_required", "working", "completed", "failed", "cancelled"},
	}
	for i := 1; i < len(seq); i++ {
		from, to := seq[i-1], seq[i]
		if from == "completed" || from == "failed" || from == "cancelled" {
			if to != from {
				return fmt.Sprintf("terminal status %s changed to %s", from, to)
			}
			continue
		}
		ok := false
		for _, a := range allowed[from] {
			ok = ok || a == to
		}
		if !ok {
			return fmt.Sprintf("transition %s -> %s is not in the state machine", from, to)
		}
	}
	return ""
}

// follow polls a task to its end (and twice more, to see that the terminal status holds),
// returning every status seen and the last raw tasks/get result.
func (r *runner) follow(ctx context.Context, t *rpc.Task) ([]string, *rpc.Task, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Wait)
	defer cancel()
	seq := []string{string(t.Status)}
	last := t
	extra := 0
	for extra < 2 {
		d := t.PollInterval
		if d <= 0 || d > 2*time.Second {
			d = 200 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return seq, last, fmt.Errorf("task %s did not finish within %s", t.TaskID, r.o.Wait)
		case <-time.After(d):
		}
		nt, err := r.c.GetTask(ctx, t.TaskID)
		if err != nil {
			return seq, last, err
		}
		if prev := seq[len(seq)-1]; rpc.TaskStatus(prev).Terminal() && string(nt.Status) != prev {
			return append(seq, string(nt.Status)), nt, nil // a terminal status changed: that is the finding
		}
		seq = append(seq, string(nt.Status))
		last = nt
		if nt.Status.Terminal() {
			extra++
		}
	}
	return seq, last, nil
}

// rpcCode returns the JSON-RPC error code of err, or 0.
func rpcCode(err error) (int64, int) {
	var e *rpc.Error
	if errors.As(err, &e) {
		return e.Code, e.HTTPStatus
	}
	return 0, 0
}

// raw sends one hand-built request through the client's transport, for probes the client
// would never send on its own. meta adds the modern per-request _meta.
func (r *runner) raw(ctx context.Context, method string, params map[string]any, hdr http.Header, meta bool) (*rpc.Message, error) {
	if params == nil {
		params = map[string]any{}
	}
	if meta {
		params["_meta"] = map[string]any{
			rpc.MetaProtocolVersion:    rpc.VersionModern,
			rpc.MetaClientCapabilities: map[string]any{"extensions": map[string]any{rpc.TasksExtension: map[string]any{}}},
			rpc.MetaClientInfo:         map[string]any{"name": "mcptask-check", "version": "1"},
		}
	}
	p, _ := json.Marshal(params)
	msg := &rpc.Message{JSONRPC: "2.0", ID: rpc.IntID(time.Now().UnixNano() % 1e12), Method: method, Params: p}
	if hdr == nil {
		hdr = http.Header{}
	}
	return r.c.Transport().RoundTrip(ctx, msg, hdr)
}

// entropy judges whether a task id looks unguessable: long enough and varied.
func entropy(id string) string {
	if len(id) < 16 {
		return fmt.Sprintf("task id %q is only %d characters", id, len(id))
	}
	distinct := map[rune]bool{}
	for _, c := range id {
		distinct[c] = true
	}
	if len(distinct) < 8 {
		return fmt.Sprintf("task id %q uses only %d distinct characters", id, len(distinct))
	}
	return ""
}
