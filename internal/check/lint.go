package check

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
)

// Violation is a rule a server broke in traffic mcptask saw while recording.
type Violation struct {
	Rule    string `json:"rule"`
	Section string `json:"section"`
	TaskID  string `json:"taskId,omitempty"`
	Seen    string `json:"seen"`
}

// Linter checks live traffic against the server rules a client can see in passing: it is
// rpc.ClientOptions.Observe while --record is on. Report receives each violation once.
type Linter struct {
	Report func(Violation)
	// Now is the clock (tests).
	Now func() time.Time

	mu      sync.Mutex
	status  map[string]string
	created map[string]time.Time
	inputs  map[string]map[string]string
	seen    map[string]bool
}

// NewLinter returns a linter that calls report for each violation.
func NewLinter(report func(Violation)) *Linter {
	return &Linter{Report: report, Now: time.Now, status: map[string]string{}, created: map[string]time.Time{},
		inputs: map[string]map[string]string{}, seen: map[string]bool{}}
}

func (l *Linter) violate(v Violation) {
	key := v.Rule + "\x00" + v.TaskID + "\x00" + v.Seen
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	if l.Report != nil {
		l.Report(v)
	}
}

// Observe implements rpc.ClientOptions.Observe.
func (l *Linter) Observe(era rpc.Era, method string, params map[string]any, result json.RawMessage, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	modern := era == rpc.EraModern
	if err != nil {
		if id, _ := params["taskId"].(string); modern && method == "tasks/get" && rpc.IsUnknownTask(err) {
			if at, ok := l.created[id]; ok && l.Now().Sub(at) < 5*time.Second {
				l.violate(Violation{"B25", "EXT §Task Creation", id, fmt.Sprintf("tasks/get failed %s after the task was created; creation must be strongly consistent", l.Now().Sub(at).Round(time.Millisecond))})
			}
		}
		return
	}
	m := obj(result)
	if str(m["resultType"]) == "task" && method != "tools/call" {
		l.violate(Violation{"B23", "EXT §Polymorphic Results", "", fmt.Sprintf("resultType \"task\" on %s; only tools/call may create a task", method)})
	}
	var task map[string]json.RawMessage
	switch {
	case method == "tools/call" && modern && str(m["resultType"]) == "task":
		task = m
	case method == "tools/call" && !modern && m["task"] != nil:
		task = obj(m["task"])
	case method == "tasks/get" || (method == "tasks/cancel" && !modern):
		task = m
	default:
		return
	}
	id := str(task["taskId"])
	if id == "" {
		l.violate(Violation{"fields", "schema Task", "", method + " answered a task without taskId"})
		return
	}
	for _, k := range []string{"status", "createdAt", "lastUpdatedAt"} {
		if _, ok := task[k]; !ok {
			l.violate(Violation{"fields", "schema Task", id, method + " answered a task without " + k})
		}
	}
	wrong, right := []string{"ttlMs", "pollIntervalMs"}, "2025-11-25"
	if modern {
		wrong, right = []string{"ttl", "pollInterval"}, "2026-07-28"
	}
	for _, k := range wrong {
		if _, ok := task[k]; ok {
			l.violate(Violation{"era-fields", "EXT-SCHEMA / C25-SCHEMA Task", id, fmt.Sprintf("%s carries %q, a field of the other era, on a %s connection", method, k, right)})
		}
	}
	if method == "tools/call" {
		l.created[id] = l.Now()
	}
	st := str(task["status"])
	if prev, ok := l.status[id]; ok {
		if msg := transitions([]string{prev, st}); msg != "" {
			l.violate(Violation{"B33", "EXT §Task Status / C25-TASKS §Task Status Lifecycle", id, msg})
		}
	}
	l.status[id] = st
	// B32: an inputRequests key never changes its content.
	for k, v := range obj(task["inputRequests"]) {
		if l.inputs[id] == nil {
			l.inputs[id] = map[string]string{}
		}
		c := string(compact(v))
		if old, ok := l.inputs[id][k]; ok && old != c {
			l.violate(Violation{"B32", "EXT §Task Update Requests", id, fmt.Sprintf("inputRequests key %q was reused for a different request", k)})
		}
		l.inputs[id][k] = c
	}
}

// ObserveStream implements rpc.ClientOptions.OnStreamNotice: notifications/progress and
// notifications/message MUST NOT appear on a task's listen stream (EXT §Task Status
// Notifications).
func (l *Linter) ObserveStream(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if method == "notifications/progress" || method == "notifications/message" {
		l.violate(Violation{"B34", "EXT §Task Status Notifications", "", method + " on a task's listen stream"})
	}
}
