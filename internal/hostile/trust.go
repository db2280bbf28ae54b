package hostile

import "net/http"

// Class 6 of the threat model: files from someone else (a project .mcp.json or
// .vscode/mcp.json in a pull request, a ledger restored from a cache or an artifact) must not
// run code or send the user's secrets. The attack is the file, not the server; the server is
// only where the file points, and what it records (Server.Saw) is the evidence.
func init() {
	Register(Mode{
		Name:  "planted-server",
		Class: 6,
		Doc:   "the server a planted project config or ledger record points at: it answers like the demo and records every request, so a test sees whether a user's secret reached it",
		Wrap:  func(_ *Server, next http.Handler) http.Handler { return next },
	})
}
