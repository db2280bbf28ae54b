package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Class 7 and 8 of the threat model: time and size. A 2025-11-25 server's tasks/list is
// paged by a cursor the server chooses; these modes answer every tasks/list with a page of
// ListPageTasks tasks (each with a status message of 1 KiB) and a next cursor that never
// ends: tasks-list-loop hands out "a", then "b", then "a" again; tasks-list-endless a new
// cursor every time. A client that holds every page, or follows the cursor as long as it
// comes, runs out of memory or time.

// ListPageTasks is the number of tasks on each page of the tasks-list modes.
const ListPageTasks = 2000

func init() {
	Register(Mode{Name: "tasks-list-loop", Class: 8,
		Doc:  fmt.Sprintf("answers tasks/list with %d tasks a page and a nextCursor that loops a → b → a", ListPageTasks),
		Wrap: func(_ *Server, next http.Handler) http.Handler { return &listAttack{next: next, loop: true} }})
	Register(Mode{Name: "tasks-list-endless", Class: 8,
		Doc:  fmt.Sprintf("answers tasks/list with %d tasks a page and a new nextCursor every time", ListPageTasks),
		Wrap: func(_ *Server, next http.Handler) http.Handler { return &listAttack{next: next} }})
}

type listAttack struct {
	next http.Handler
	loop bool
	n    atomic.Int64
}

func (a *listAttack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		a.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != "tasks/list" {
		r.Body = io.NopCloser(bytes.NewReader(body))
		a.next.ServeHTTP(w, r)
		return
	}
	next := "a"
	switch {
	case a.loop && req.Params.Cursor == "a":
		next = "b"
	case !a.loop:
		next = fmt.Sprintf("c%d", a.n.Add(1))
	}
	now := time.Now().UTC().Format(time.RFC3339)
	msg := strings.Repeat("m", 1024)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":{"nextCursor":%q,"tasks":[`, req.ID, next)
	for i := range ListPageTasks {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"taskId":"list-%s-%d","status":"working","statusMessage":%q,"createdAt":%q,"lastUpdatedAt":%q,"ttl":60000}`, next, i, msg, now, now)
	}
	b.WriteString("]}}")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}
