package hostile

// Class 8 of the threat model (SECURITY.md): size. These modes send strings far larger than
// any honest server would, and task ids mcptask must refuse (not visible ASCII, or absurdly
// long); a test asserts that the ledger and the screen stay bounded and that a refused id
// gets a clear error.

import (
	"net/http"
	"strings"
)

// HugeText is the length of the strings the size modes send: 1 MiB, far beyond the few KiB
// mcptask keeps or prints of one.
const HugeText = 1 << 20

// BadTaskIDs are the task ids the size-bad-task-id-* modes hand back, by mode name suffix.
var BadTaskIDs = map[string]string{
	"control":  "task-\x1b]0;pwned\x07-\x1b[2J",
	"space":    "task 1; rm -rf ~",
	"nonascii": "task-\u202eexe.gnp-é",
	"long":     strings.Repeat("t", 10<<10),
}

func init() {
	Register(Mode{Name: "size-huge-strings", Class: 8,
		Doc: "makes every status message, error message, result text, description and title the demo sends 1 MiB longer",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			huge := strings.Repeat("x", HugeText)
			return EditMessages(next, func(_ string, m map[string]any) {
				EditStrings(m, terminalTextKeys, func(s string) string { return s + huge })
			})
		}})
	Register(Mode{Name: "size-huge-tool-name", Class: 8,
		Doc: "lists tools whose names are 1 MiB long",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			huge := strings.Repeat("n", HugeText)
			return EditMessages(next, func(method string, m map[string]any) {
				if method == "tools/list" {
					EditStrings(m, map[string]bool{"name": true}, func(s string) string { return s + huge })
				}
			})
		}})
	for kind, id := range BadTaskIDs {
		Register(Mode{Name: "size-bad-task-id-" + kind, Class: 8,
			Doc: "creates tasks but hands back the task id " + kind + " in the CreateTaskResult",
			Wrap: func(_ *Server, next http.Handler) http.Handler {
				return EditMessages(next, func(method string, m map[string]any) {
					if method == "tools/call" {
						EditStrings(m, map[string]bool{"taskId": true}, func(string) string { return id })
					}
				})
			}})
	}
	Register(Mode{Name: "size-bad-task-id-on-get", Class: 8,
		Doc: "creates tasks honestly, then answers tasks/get for them with a task id holding control characters",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return EditMessages(next, func(method string, m map[string]any) {
				if method == "tasks/get" {
					EditStrings(m, map[string]bool{"taskId": true}, func(string) string { return BadTaskIDs["control"] })
				}
			})
		}})
}
