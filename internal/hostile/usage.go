package hostile

// Class 13 (exit codes are mcptask's): a server whose error messages are worded like the
// command line's own usage errors ("invalid argument", "unknown flag", "accepts 1 arg(s)"),
// so that a client deciding its exit code by reading error text would report the server's
// failure as the user's mistake (exit 2, "nothing was sent"), and a script would not retry.

import (
	"encoding/json"
	"net/http"
)

// UsageWordsMessage is the JSON-RPC error message of the "usage-words-in-errors" mode: every
// phrase mcptask once matched in error text to mean a usage error.
const UsageWordsMessage = `invalid argument "x" for "--y" flag: unknown flag: --z; unknown shorthand flag: 'q'; unknown command "w" for "mcptask"; accepts 1 arg(s), received 2; requires at least 1 arg(s); requires at most 1 arg(s)`

func init() {
	Register(Mode{Name: "usage-words-in-errors", Class: 13,
		Doc: "answers tools/call and tools/list with a JSON-RPC internal error (-32603) whose message is worded like cobra's usage errors; everything else is the demo's",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if m := methodOf(r); m != "tools/call" && m != "tools/list" {
					next.ServeHTTP(w, r)
					return
				}
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.NewDecoder(r.Body).Decode(&req)
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
					"error": map[string]any{"code": -32603, "message": UsageWordsMessage}})
			})
		}})
}
