package demo

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// listPageSize is the tasks/list page size: small enough that a client's pagination is
// exercised by a modest test, large enough for a human.
const listPageSize = 50

// legacyReq is one 2025-11-25 request inside a session. out, when set, sends a message to the
// client on the stream of this request (the SSE response of an HTTP POST, or stdout).
type legacyReq struct {
	msg  *rpc.Message
	sess *session
	out  func(*rpc.Message) error
}

// newSessionID mints a session id: crypto-random and visible ASCII only (C25-TRANS §Session
// Management: "The session ID SHOULD be globally unique and cryptographically secure").
func newSessionID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

type initParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Elicitation json.RawMessage `json:"elicitation"`
	} `json:"capabilities"`
}

// initialize starts a legacy session with the given id and returns the InitializeResult.
func (s *Server) initialize(m *rpc.Message, id string) (any, *rpc.Error) {
	var p initParams
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, invalidParams("initialize: %v", err)
		}
	}
	se := &session{ID: id, CreatedAt: s.opts.Now(),
		Elicitation: len(p.Capabilities.Elicitation) > 0 && string(p.Capabilities.Elicitation) != "null"}
	s.mu.Lock()
	s.sessions[id] = se
	s.persistLocked()
	s.mu.Unlock()
	// C25-LIFE §Version Negotiation: if the server does not support the requested version it
	// answers with another version it supports; this era only knows 2025-11-25.
	return map[string]any{
		"protocolVersion": rpc.VersionLegacy,
		"capabilities": map[string]any{
			"tools": map[string]any{},
			"tasks": map[string]any{
				"list":     map[string]any{},
				"cancel":   map[string]any{},
				"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
			},
		},
		"serverInfo":   map[string]any{"name": serverName, "version": Version},
		"instructions": "mcptask demo server (2025-11-25 session). Call tools with params.task to get tasks.",
	}, nil
}

// handleLegacy serves one request of a legacy session.
func (s *Server) handleLegacy(ctx context.Context, r *legacyReq) (any, *rpc.Error) {
	switch r.msg.Method {
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": s.toolsListed(rpc.EraLegacy)}, nil
	case "tools/call":
		return s.legacyCall(ctx, r)
	case "tasks/get", "tasks/cancel", "tasks/result":
		var p taskParams
		if err := json.Unmarshal(r.msg.Params, &p); err != nil || p.TaskID == "" {
			return nil, invalidParams("%s: params.taskId is required", r.msg.Method)
		}
		switch r.msg.Method {
		case "tasks/get":
			return s.legacyGet(r.sess, p.TaskID)
		case "tasks/cancel":
			return s.legacyCancel(r.sess, p.TaskID)
		default:
			return s.legacyResult(ctx, r, p.TaskID)
		}
	case "tasks/list":
		return s.legacyList(r)
	}
	return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "method not found: " + r.msg.Method}
}

func (s *Server) legacyCall(ctx context.Context, r *legacyReq) (any, *rpc.Error) {
	var p callParams
	if err := json.Unmarshal(r.msg.Params, &p); err != nil {
		return nil, invalidParams("tools/call: %v", err)
	}
	tl := s.findTool(p.Name, rpc.EraLegacy)
	if tl == nil {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	a, perr := parseArgs(p.Name, p.Arguments)
	if perr != nil {
		return nil, perr
	}
	if p.Task == nil {
		if tl.TaskSupport == "required" {
			// C25-TASKS §Tool-Level Negotiation: "If a tool has taskSupport "required" and the
			// request is not task-augmented, the server MUST return a -32601 error".
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: fmt.Sprintf("tool %s must be called as a task (execution.taskSupport is required)", p.Name)}
		}
		if p.Name == "confirm" {
			return textResult("confirmed", false), nil
		}
		if p.Name == "progress" {
			return s.countProgress(ctx, r.out, progressToken(r.msg.Params), a)
		}
		res, e := s.runInline(ctx, p.Name, a)
		if e != nil {
			return nil, e
		}
		return res, nil
	}
	if tl.TaskSupport == "" {
		// C25-TASKS §Tool-Level Negotiation: forbidden/absent taskSupport with a task → SHOULD
		// return -32601.
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: fmt.Sprintf("tool %s does not support tasks (execution.taskSupport is forbidden)", p.Name)}
	}
	ttl := s.opts.TTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		// C25-TASKS §TTL and Resource Management: the receiver honours or overrides the
		// requested ttl; the demo honours it up to a cap.
		ttl = min(time.Duration(*p.Task.TTL)*time.Millisecond, maxTTL)
	}
	s.mu.Lock()
	t := s.newTaskLocked(rpc.EraLegacy, r.sess.ID, p.Name, p.Arguments, ttl, r.sess.Elicitation)
	t.ProgressToken = progressToken(r.msg.Params)
	res := map[string]any{"task": s.legacyTaskLocked(t)}
	s.mu.Unlock()
	return res, nil
}

// legacyTaskLocked renders t as a 2025-11-25 Task (ttl/pollInterval, ttl null when unlimited).
func (s *Server) legacyTaskLocked(t *task) map[string]any {
	m := map[string]any{
		"taskId":        t.ID,
		"status":        t.Status,
		"createdAt":     timestamp(t.CreatedAt),
		"lastUpdatedAt": timestamp(t.UpdatedAt),
		"ttl":           ttlMsValue(t),
		"pollInterval":  s.opts.PollInterval.Milliseconds(),
	}
	if t.Message != "" {
		m["statusMessage"] = t.Message
	}
	return m
}

// legacyLookupLocked finds a task of this session. Tasks are bound to the session that
// created them; to anyone else they do not exist.
func (s *Server) legacyLookupLocked(sess *session, id string) *task {
	t := s.lookupLocked(id)
	if t == nil || t.Era != rpc.EraLegacy || t.Session != sess.ID {
		return nil
	}
	return t
}

func (s *Server) legacyGet(sess *session, id string) (any, *rpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.legacyLookupLocked(sess, id)
	if t == nil {
		return nil, taskNotFound(id)
	}
	// C25-TASKS §Associating Task-Related Messages: tasks/get results SHOULD NOT carry
	// related-task meta; the Task is returned flat.
	return s.legacyTaskLocked(t), nil
}

func (s *Server) legacyCancel(sess *session, id string) (any, *rpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.legacyLookupLocked(sess, id)
	if t == nil {
		return nil, taskNotFound(id)
	}
	if t.Status.Terminal() {
		// C25-TASKS §Task Cancellation: "Receivers MUST reject cancellation requests for tasks
		// already in a terminal status with error code -32602".
		return nil, invalidParams("cannot cancel task %s: it is already %s", id, t.Status)
	}
	// "the receiver MUST transition the task to cancelled before sending the response".
	s.setStatusLocked(t, rpc.StatusCancelled, "cancelled at the client's request")
	wakeTask(t)
	return s.legacyTaskLocked(t), nil
}

// legacyResult is tasks/result: it blocks until the task is terminal and then returns what the
// tools/call would have returned. While the task needs input it sends the elicitation request
// on this request's stream (C25-TASKS §Input Required Status).
func (s *Server) legacyResult(ctx context.Context, r *legacyReq, id string) (any, *rpc.Error) {
	for {
		s.mu.Lock()
		t := s.legacyLookupLocked(r.sess, id)
		if t == nil {
			s.mu.Unlock()
			return nil, taskNotFound(id)
		}
		changed := s.changed
		if t.Status.Terminal() {
			defer s.mu.Unlock()
			return s.legacyPayloadLocked(t)
		}
		// The questions go one at a time on this stream; the next one after the previous
		// answer.
		var in taskInput
		pending := t.pendingLocked()
		ask := t.Status == rpc.StatusInputRequired && len(pending) > 0 && !t.inFlight && r.out != nil
		if ask {
			t.inFlight = true
			in = *pending[0]
		}
		s.mu.Unlock()
		if ask {
			s.elicit(ctx, r, t, in)
			if ctx.Err() != nil {
				// The client went away without answering: the question stays open for the
				// next tasks/result.
				return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "request cancelled"}
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "request cancelled"}
		case <-s.closing:
			return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "server closing"}
		}
	}
}

// legacyPayloadLocked is the tasks/result payload of a terminal task.
func (s *Server) legacyPayloadLocked(t *task) (any, *rpc.Error) {
	switch {
	case t.Error != nil:
		// C25-TASKS §Result Retrieval: a JSON-RPC error of the underlying request is returned
		// as that same error.
		e := *t.Error
		return nil, &e
	case t.Result != nil:
		res := rawMap(t.Result)
		// C25-TASKS §Related Task Metadata: the tasks/result response MUST carry related-task.
		meta, _ := res["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[rpc.MetaRelatedTask] = map[string]any{"taskId": t.ID}
		res["_meta"] = meta
		return res, nil
	default:
		return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: fmt.Sprintf("task %s was %s and has no result", t.ID, t.Status)}
	}
}

// elicit sends the task's elicitation/create request on r's stream and records the answer.
func (s *Server) elicit(ctx context.Context, r *legacyReq, t *task, in taskInput) {
	req := in.Request
	var ir struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	_ = json.Unmarshal(req, &ir)
	// C25-TASKS §Input Required Status: requests sent for a task MUST carry related-task.
	ir.Params["_meta"] = map[string]any{rpc.MetaRelatedTask: map[string]any{"taskId": t.ID}}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Stop waiting for the answer when the task ends meanwhile (cancelled, expired).
	go func() {
		for {
			ch := s.waitChange()
			s.mu.Lock()
			over := t.gone || t.Status.Terminal()
			s.mu.Unlock()
			if over {
				cancel()
				return
			}
			select {
			case <-ch:
			case <-rctx.Done():
				return
			}
		}
	}()
	resp, err := s.request(rctx, r.out, "elicit-"+in.Key+"-"+t.ID, ir.Method, ir.Params)
	s.mu.Lock()
	defer s.mu.Unlock()
	t.inFlight = false
	switch {
	case err != nil:
		s.opts.Logf("elicitation for task %s: %v", t.ID, err)
	case resp.Error != nil:
		s.failLocked(t, &rpc.Error{Code: resp.Error.Code, Message: "elicitation failed: " + resp.Error.Message})
	default:
		s.answerLocked(t, in.Key, resp.Result)
	}
	s.notifyLocked()
}

// listCursor encodes a tasks/list offset as an opaque cursor.
func listCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("demo-list:" + strconv.Itoa(off)))
}

func parseListCursor(c string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "demo-list:") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "demo-list:"))
	return n, err == nil && n >= 0
}

func (s *Server) legacyList(r *legacyReq) (any, *rpc.Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(r.msg.Params) > 0 {
		_ = json.Unmarshal(r.msg.Params, &p)
	}
	off := 0
	if p.Cursor != nil {
		n, ok := parseListCursor(*p.Cursor)
		if !ok {
			// C25-TASKS §Protocol Errors: invalid cursor → -32602.
			return nil, invalidParams("tasks/list: invalid cursor")
		}
		off = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []*task
	for _, t := range s.tasks {
		if t.Era == rpc.EraLegacy && t.Session == r.sess.ID && !s.expiredLocked(t) {
			mine = append(mine, t)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		if !mine[i].CreatedAt.Equal(mine[j].CreatedAt) {
			return mine[i].CreatedAt.Before(mine[j].CreatedAt)
		}
		return mine[i].ID < mine[j].ID
	})
	if off > len(mine) {
		return nil, invalidParams("tasks/list: cursor is past the end of the list")
	}
	end := min(off+listPageSize, len(mine))
	list := []any{}
	for _, t := range mine[off:end] {
		list = append(list, s.legacyTaskLocked(t))
	}
	res := map[string]any{"tasks": list}
	if end < len(mine) {
		// C25-TASKS §Task Listing: nextCursor is present whenever more tasks remain.
		res["nextCursor"] = listCursor(end)
	}
	return res, nil
}
