package hostile

import (
	"net/http"
	"strings"
)

// Class 3 of the threat model: the proxy is a server to its hosts. Its attackers are web pages
// and floods on the host side, not the server; the server here only records what the proxy
// forwarded (Start records every request), so that a test can tell whether a refused request
// reached it and whether the user's bearer went with it.

func init() {
	Register(Mode{
		Name:  "proxy-upstream",
		Class: 3,
		Doc: "the real server behind mcptask proxy: the demo on /mcp, and a page on every other path " +
			"(an admin page, any metadata document), so that whatever the proxy forwards is answered and recorded",
		Wrap: func(_ *Server, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/mcp":
					next.ServeHTTP(w, r)
				case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"resource":"http://` + r.Host + `/mcp","authorization_servers":["http://` + r.Host + `"]}`))
				default:
					w.Header().Set("Content-Type", "text/plain")
					_, _ = w.Write([]byte("upstream page " + r.URL.Path))
				}
			})
		},
	})
}
