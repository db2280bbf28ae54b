package check

import "encoding/json"

// handedTask reports whether this session was handed task id in an answer that another rule
// judges as malformed or unwanted: a CreateTaskResult not nested under "task" (A2), or a task
// answered to a call the server never declared task support for (A1b). Such a task is the
// session's own, so its status notifications are judged as notifications (A6b), not reported
// a second time as naming a task "this session never created".
func (r *runner) handedTask(id string) bool {
	if id == "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handed[id] {
		return true
	}
	for _, c := range r.calls {
		if c.plain == nil {
			continue
		}
		var m struct {
			TaskID string `json:"taskId"`
			Task   struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		if json.Unmarshal(c.plain, &m) == nil && (m.TaskID == id || m.Task.TaskID == id) {
			return true
		}
	}
	return false
}

// hand records a task id the session was given outside the catalogue's calls (A1b's probe).
func (r *runner) hand(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handed == nil {
		r.handed = map[string]bool{}
	}
	r.handed[id] = true
}
