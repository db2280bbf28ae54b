package check

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcptask/mcptask/internal/rpc"
	"github.com/mcptask/mcptask/internal/taskstatus"
)

// Violation is a rule a server (or, through mcptask proxy, a host) broke in traffic mcptask
// saw while recording.
type Violation struct {
	Rule    string `json:"rule"`
	Section string `json:"section"`
	TaskID  string `json:"taskId,omitempty"`
	Seen    string `json:"seen"`
	// Peer is the side that broke the rule: PeerServer or PeerHost. Empty means the server
	// (a client's own recording has no host).
	Peer string `json:"peer,omitempty"`
	// Host names the proxied host concerned, when there is one.
	Host string `json:"host,omitempty"`
}

// serverViolation is a violation of a server rule.
func serverViolation(rule, section, taskID, seen string) Violation {
	return Violation{Rule: rule, Section: section, TaskID: taskID, Seen: seen}
}

// The sides of a proxied conversation.
const (
	PeerServer = "server"
	PeerHost   = "host"
)

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
	// interval is the poll interval the server last gave for each task.
	interval map[string]time.Duration
	// lastPoll is when each host last sent tasks/get for a task (key host NUL taskId).
	lastPoll map[string]time.Time
	// declared remembers which clientCapabilities declare the tasks extension: a host sends
	// the same few bytes on every request.
	declared map[string]bool
}

// NewLinter returns a linter that calls report for each violation.
func NewLinter(report func(Violation)) *Linter {
	return &Linter{Report: report, Now: time.Now, status: map[string]string{}, created: map[string]time.Time{},
		inputs: map[string]map[string]string{}, seen: map[string]bool{},
		interval: map[string]time.Duration{}, lastPoll: map[string]time.Time{}, declared: map[string]bool{}}
}

func (l *Linter) violate(v Violation) {
	l.violateOnce(v.Rule+"\x00"+v.TaskID+"\x00"+v.Seen, v)
}

// maxKeys bounds what the linter remembers of what peers did (the violations it reported, the
// last poll of each host and task): behind the proxy, a host sending random task ids or names
// must not grow it without bound. Past it the memory is cleared; at worst a violation is
// reported once more, or a poll's pace goes unjudged once.
const maxKeys = 10000

// violateOnce reports v unless a violation with the same key was reported before.
func (l *Linter) violateOnce(key string, v Violation) {
	if l.seen[key] {
		return
	}
	if len(l.seen) >= maxKeys {
		clear(l.seen)
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
		l.failed(modern, method, params, err)
		return
	}
	m := obj(result)
	if modern {
		l.modernShapes(method, m)
	}
	if str(m["resultType"]) == "task" && method != "tools/call" {
		l.violate(serverViolation("B23", "EXT §Polymorphic Results", "", fmt.Sprintf("resultType \"task\" on %s; only tools/call may create a task", method)))
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
		l.violate(serverViolation("fields", "schema Task", "", method+" answered a task without taskId"))
		return
	}
	l.fields(modern, method, id, task)
	if method == "tools/call" {
		l.created[id] = l.Now()
		if len(l.created) > maxLinted {
			l.forgetEnded()
		}
	}
	if d := pollInterval(task); d > 0 {
		l.interval[id] = d
	}
	st := str(task["status"])
	if prev, ok := l.status[id]; ok {
		if msg := transitions([]string{prev, st}); msg != "" {
			l.violate(serverViolation("B33", "EXT §Task Status / C25-TASKS §Task Status Lifecycle", id, msg))
		}
	}
	l.status[id] = st
	l.inputKeys(id, task)
}

// modernShapes watches what released SDKs got wrong under 2026-07-28, as the checker judges it:
// the 2025-11-25 related-task key (B39), a task marked complete (B18b), and millisecond fields
// that are not integers (B24b).
func (l *Linter) modernShapes(method string, m map[string]json.RawMessage) {
	rule := func(id, taskID, seen string) Violation {
		r, _ := ruleOf(id)
		return serverViolation(id, r.Section, taskID, seen)
	}
	if _, ok := obj(m["_meta"])[rpc.MetaRelatedTask]; ok {
		l.violate(rule("B39", "", fmt.Sprintf("%s result carries _meta[%q], a 2025-11-25 key the tasks extension does not use", method, rpc.MetaRelatedTask)))
	}
	id := str(m["taskId"])
	if method == "tools/call" && str(m["resultType"]) == "complete" && id != "" && m["status"] != nil {
		l.violate(rule("B18b", id, "a tools/call result carries a task but says resultType \"complete\": a client takes it as the tool's result"))
	}
	if (method == "tools/call" && str(m["resultType"]) == "task") || method == "tasks/get" {
		for _, k := range []string{"ttlMs", "pollIntervalMs"} {
			raw, ok := m[k]
			if whole, _ := intMs(raw); ok && !whole && !(k == "ttlMs" && string(compact(raw)) == "null") {
				l.violate(rule("B24b", id, fmt.Sprintf("%s: %s is %s, want integer milliseconds", method, k, quote(raw))))
			}
		}
	}
}

// inputKeys watches B32: an inputRequests key never changes its content.
func (l *Linter) inputKeys(id string, task map[string]json.RawMessage) {
	for k, v := range obj(task["inputRequests"]) {
		if l.inputs[id] == nil {
			l.inputs[id] = map[string]string{}
		}
		c := string(compact(v))
		if old, ok := l.inputs[id][k]; ok && old != c {
			l.violate(serverViolation("B32", "EXT §Task Update Requests", id, fmt.Sprintf("inputRequests key %q was reused for a different request", k)))
		}
		l.inputs[id][k] = c
	}
}

// failed watches a request that failed: a tasks/get that does not find a task created a
// moment ago breaks B25 (task creation is strongly consistent).
func (l *Linter) failed(modern bool, method string, params map[string]any, err error) {
	id, _ := params["taskId"].(string)
	if !modern || method != "tasks/get" || !rpc.IsUnknownTask(err) {
		return
	}
	if at, ok := l.created[id]; ok && l.Now().Sub(at) < 5*time.Second {
		l.violate(serverViolation("B25", "EXT §Task Creation", id, fmt.Sprintf("tasks/get failed %s after the task was created; creation must be strongly consistent", l.Now().Sub(at).Round(time.Millisecond))))
	}
}

// fields checks that a task carries the fields every task has, and none of the other era's.
func (l *Linter) fields(modern bool, method, id string, task map[string]json.RawMessage) {
	for _, k := range []string{"status", "createdAt", "lastUpdatedAt"} {
		if _, ok := task[k]; !ok {
			l.violate(serverViolation("fields", "schema Task", id, method+" answered a task without "+k))
		}
	}
	wrong, right := []string{"ttlMs", "pollIntervalMs"}, "2025-11-25"
	if modern {
		wrong, right = []string{"ttl", "pollInterval"}, "2026-07-28"
	}
	for _, k := range wrong {
		if _, ok := task[k]; ok {
			l.violate(serverViolation("era-fields", "EXT-SCHEMA / C25-SCHEMA Task", id, fmt.Sprintf("%s carries %q, a field of the other era, on a %s connection", method, k, right)))
		}
	}
}

// ObserveStream implements rpc.ClientOptions.OnStreamNotice: notifications/progress and
// notifications/message MUST NOT appear on a task's listen stream (EXT §Task Status
// Notifications).
func (l *Linter) ObserveStream(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch method {
	case "notifications/progress", "notifications/message":
		l.violate(serverViolation("B34", "EXT §Task Status Notifications", "", method+" on a task's listen stream"))
	case "notifications/tasks/status":
		r, _ := ruleOf("B39")
		l.violate(serverViolation("B39", r.Section, "", "notifications/tasks/status, the 2025-11-25 notification, on a listen stream; the tasks extension's is notifications/tasks"))
	}
}

// maxLinted is how many tasks the linter remembers before it forgets those that ended: a
// proxy may run for days.
const maxLinted = 10000

// forgetEnded drops what the linter keeps of tasks that reached a terminal status.
func (l *Linter) forgetEnded() {
	for id, st := range l.status {
		if taskstatus.Terminal(st) {
			delete(l.status, id)
			delete(l.created, id)
			delete(l.inputs, id)
			delete(l.interval, id)
		}
	}
	for k := range l.lastPoll {
		if _, ok := l.created[k[strings.IndexByte(k, 0)+1:]]; !ok {
			delete(l.lastPoll, k)
		}
	}
	if len(l.seen) > maxLinted {
		clear(l.seen) // a violation seen again is reported again: better than growing forever
	}
}

// pollInterval reads a task's suggested poll interval, in either era's field.
func pollInterval(task map[string]json.RawMessage) time.Duration {
	raw := task["pollIntervalMs"]
	if raw == nil {
		raw = task["pollInterval"]
	}
	var ms float64
	if json.Unmarshal(raw, &ms) != nil || ms <= 0 || ms > 1e9 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// HostRequest is one request a host sent through mcptask proxy, with what the host-side rules
// need to judge it. Hosts are kept apart by Host, so that two hosts polling the same task are
// not taken for one host polling twice as fast.
type HostRequest struct {
	Host   string
	Era    rpc.Era
	Method string
	// TaskID is params.taskId of a tasks/* request.
	TaskID string
	// HTTP is set over Streamable HTTP; Header then holds the request's headers.
	HTTP   bool
	Header http.Header
	// ClientCaps is a 2026-07-28 request's _meta clientCapabilities, nil when absent.
	ClientCaps json.RawMessage
	// ServerCaps is what the server declared to this host at initialize (2025-11-25), nil
	// when the proxy did not see the handshake.
	ServerCaps json.RawMessage
	// TaskParam says the request carried params.task (2025-11-25 task augmentation).
	TaskParam bool
}

// ObserveHost checks one request a host sent, against the client rules of PROTOCOL.md §5 that
// a proxy can see. It is called before the request is forwarded.
func (l *Linter) ObserveHost(r HostRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.Now()
	host := func(rule, section, seen string) Violation {
		return Violation{Rule: rule, Section: section, TaskID: r.TaskID, Seen: seen, Peer: PeerHost, Host: r.Host}
	}
	modern := r.Era == rpc.EraModern
	isTaskMethod := r.Method == "tasks/get" || r.Method == "tasks/update" || r.Method == "tasks/cancel"
	switch {
	case modern && (r.Method == "tasks/result" || r.Method == "tasks/list"):
		// SEP-2663 §Backward Compatibility; EXT §Task Polling: the result is inline in
		// tasks/get and there is no listing in 2026-07-28.
		l.violateOnce("C28\x00"+r.Host+"\x00"+r.Method, host("C28", "SEP-2663 §Backward Compatibility; EXT §Task Polling",
			fmt.Sprintf("%s sent %s on a 2026-07-28 connection, where it was removed", r.Host, r.Method)))
	case modern && isTaskMethod && !l.declaresTasks(r.ClientCaps):
		// EXT §Capability Negotiation: tasks/* without the extension declared get -32021.
		l.violateOnce("C19\x00"+r.Host+"\x00"+r.Method, host("C19", "EXT §Capability Negotiation",
			fmt.Sprintf("%s sent %s without declaring %s in _meta clientCapabilities", r.Host, r.Method, rpc.TasksExtension)))
	case modern && r.Method == "tools/call" && r.TaskParam:
		l.violateOnce("C22\x00"+r.Host, host("C22", "SEP-2663 §Backward Compatibility",
			fmt.Sprintf("%s sent the 2025-11-25 task param on a 2026-07-28 tools/call", r.Host)))
	case !modern && r.ServerCaps != nil:
		if what := undeclared(r); what != "" {
			l.violateOnce("C4\x00"+r.Host+"\x00"+r.Method, host("C4", "C25-LIFE §Operation; C25-TASKS §Capabilities",
				fmt.Sprintf("%s sent %s although the server did not declare %s", r.Host, r.Method, what)))
		}
	}
	if modern && r.HTTP && isTaskMethod {
		// EXT §Streamable HTTP: Routing Headers: Mcp-Name MUST carry params.taskId.
		name, err := rpc.DecodeHeaderValue(r.Header.Get("Mcp-Name"))
		switch {
		case r.Header.Get("Mcp-Name") == "":
			l.violateOnce("C10\x00"+r.Host+"\x00"+r.Method, host("C10", "EXT §Streamable HTTP: Routing Headers",
				fmt.Sprintf("%s sent %s without the Mcp-Name header", r.Host, r.Method)))
		case err != nil || name != r.TaskID:
			l.violateOnce("C10\x00"+r.Host+"\x00"+r.Method+"\x00mismatch", host("C10", "EXT §Streamable HTTP: Routing Headers",
				fmt.Sprintf("%s sent %s with an Mcp-Name that is not its taskId", r.Host, r.Method)))
		}
	}
	if modern && r.HTTP {
		// C26-HTTP §Standard Request Headers: Mcp-Method on every request.
		if m := r.Header.Get("Mcp-Method"); m != r.Method {
			seen := fmt.Sprintf("%s sent %s without the Mcp-Method header", r.Host, r.Method)
			if m != "" {
				seen = fmt.Sprintf("%s sent %s with Mcp-Method %q", r.Host, r.Method, m)
			}
			l.violateOnce("C9\x00"+r.Host+"\x00"+r.Method, host("C9", "C26-HTTP §Standard Request Headers", seen))
		}
	}
	key := r.Host + "\x00" + r.TaskID
	switch r.Method {
	case "tasks/get":
		// C25-TASKS §Getting Tasks; EXT §Task Polling: requestors SHOULD respect the poll
		// interval. More than a quarter faster than asked counts, so that timer jitter does not.
		if last, ok := l.lastPoll[key]; ok {
			if want := l.interval[r.TaskID]; want > 0 && now.Sub(last) < want*3/4 {
				l.violateOnce("C24\x00"+key, host("C24", "C25-TASKS §Getting Tasks; EXT §Task Polling",
					fmt.Sprintf("%s polled again after %s; the server asked for every %s", r.Host, now.Sub(last).Round(time.Millisecond), want)))
			}
		}
		if len(l.lastPoll) >= maxKeys {
			clear(l.lastPoll)
		}
		l.lastPoll[key] = now
	case "tasks/update", "tasks/cancel", "tasks/result":
		// After answering or cancelling, polling again at once is what a host should do.
		delete(l.lastPoll, key)
	}
}

// ObserveHostError checks the server's error answer to a host's request: a tasks/* request for
// an id the server does not know (-32602) that was never created where the linter could see
// it is the host's mistake (a mangled, stale or invented id), not the server's.
func (l *Linter) ObserveHostError(r HostRequest, e *rpc.Error) {
	if e == nil || e.Code != rpc.CodeInvalidParams || r.TaskID == "" || !strings.HasPrefix(r.Method, "tasks/") {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.created[r.TaskID]; ok {
		return
	}
	if _, ok := l.status[r.TaskID]; ok {
		return
	}
	l.violateOnce("unknown-task\x00"+r.Host+"\x00"+r.TaskID, Violation{Rule: "unknown-task", Section: "C25-TASKS §Error Handling; EXT §Protocol Errors",
		TaskID: r.TaskID, Peer: PeerHost, Host: r.Host,
		Seen: fmt.Sprintf("%s sent %s for a task id the server does not know and that was never created through this proxy", r.Host, r.Method)})
}

// declaresTasks reports whether 2026-07-28 clientCapabilities declare the tasks extension.
func (l *Linter) declaresTasks(caps json.RawMessage) bool {
	if ok, seen := l.declared[string(caps)]; seen {
		return ok
	}
	_, ok := obj(obj(caps)["extensions"])[rpc.TasksExtension]
	if len(l.declared) < 256 {
		l.declared[string(caps)] = ok
	}
	return ok
}

// undeclared names the 2025-11-25 server capability a request needs and the server did not
// declare, or "" (C25-TASKS §Capabilities: tasks/list needs tasks.list, tasks/cancel needs
// tasks.cancel, a task-augmented tools/call needs tasks.requests.tools.call).
func undeclared(r HostRequest) string {
	tasks := obj(obj(r.ServerCaps)["tasks"])
	has := func(path ...string) bool {
		m := tasks
		for _, p := range path {
			v, ok := m[p]
			if !ok {
				return false
			}
			m = obj(v)
		}
		return true
	}
	switch {
	case r.Method == "tasks/list" && !has("list"):
		return "tasks.list"
	case r.Method == "tasks/cancel" && !has("cancel"):
		return "tasks.cancel"
	case r.Method == "tools/call" && r.TaskParam && !has("requests", "tools", "call"):
		return "tasks.requests.tools.call"
	}
	return ""
}
