package proxy

// The proxy is a server to its hosts, and it listens on loopback, which every web page in the
// user's browser can reach: by DNS rebinding (a name of the page's that resolves to 127.0.0.1,
// so that the browser sends the page's requests, cookies of nobody, and the page's name in
// Host) and by the requests a page may send anywhere without asking (a form's POST). What the
// proxy forwards carries the user's credentials (--bearer-env, --header, a named server's
// headers), so it does what the transport spec asks of a server before anything is forwarded:
//
//	C25-TRANS §Security Warning, C26-HTTP §Security: "Servers MUST validate the Origin header
//	on all incoming connections to prevent DNS rebinding attacks. If the Origin header is
//	present and invalid, servers MUST respond with HTTP 403 Forbidden. The HTTP response body
//	MAY comprise a JSON-RPC error response that has no id."
//
// As the TypeScript SDK's DNS-rebinding protection does, it also checks Host: a rebinding page
// cannot choose the Host its browser sends, and it is always the page's own name.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// guard decides which requests the proxy serves.
type guard struct {
	hosts   []string // --allowed-host, lower case: "name" or "name:port"
	origins []string // --allowed-origin, normalised by normOrigin
}

func newGuard(hosts, origins []string) (*guard, error) {
	g := &guard{}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || strings.ContainsAny(h, "/ ") {
			return nil, fmt.Errorf("allowed host %q: want a host name or address, with or without :PORT", h)
		}
		g.hosts = append(g.hosts, h)
	}
	for _, o := range origins {
		n, ok := normOrigin(o)
		if !ok {
			return nil, fmt.Errorf("allowed origin %q: want scheme://host[:port], such as http://localhost:6274, or null", o)
		}
		g.origins = append(g.origins, n)
	}
	return g, nil
}

// checkHost returns why the Host of r is refused, "" when it is accepted. Accepted: a
// loopback name or address (localhost, 127.0.0.0/8, ::1) or the address the connection came
// in on, with the port it came in on; or a value of --allowed-host.
func (g *guard) checkHost(r *http.Request) string {
	hostport := strings.ToLower(r.Host)
	name, port := splitHost(hostport)
	for _, a := range g.hosts {
		if a == hostport || a == name || (port != "" && a == name+":"+port) || a == "["+name+"]" {
			return ""
		}
	}
	if name == "" {
		return "the request has no Host header"
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	var localIP net.IP
	localPort := ""
	if local != nil {
		if h, p, err := net.SplitHostPort(local.String()); err == nil {
			localIP, localPort = net.ParseIP(h), p
		}
	}
	if port == "" {
		port = "80"
	}
	ip := net.ParseIP(name)
	nameOK := name == "localhost" || (ip != nil && (ip.IsLoopback() || ip.Equal(localIP)))
	if nameOK && (localPort == "" || port == localPort) {
		return ""
	}
	return fmt.Sprintf("Host %q is not this proxy's address (a web page rebinding its name to it sends its own name; give --allowed-host to accept another name)", clip(r.Host))
}

// checkOrigin returns why the Origin of r is refused, "" when it is accepted: absent (hosts
// that are not browsers send none), a loopback origin, or a value of --allowed-origin.
func (g *guard) checkOrigin(r *http.Request) string {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return ""
	}
	o := vals[0]
	n, ok := normOrigin(o)
	if ok && len(vals) == 1 {
		for _, a := range g.origins {
			if a == n {
				return ""
			}
		}
		if u, err := url.Parse(n); err == nil && u.Host != "" {
			h := u.Hostname()
			if ip := net.ParseIP(h); h == "localhost" || (ip != nil && ip.IsLoopback()) {
				return ""
			}
		}
	}
	return fmt.Sprintf("Origin %q is not allowed (a web page may not use the proxy; give --allowed-origin to accept a browser-based host)", clip(o))
}

// normOrigin lower-cases an origin and drops its default port; "null" stays "null".
func normOrigin(o string) (string, bool) {
	o = strings.TrimSpace(o)
	if o == "null" {
		return o, true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// splitHost splits a Host value into its name (no brackets) and port ("" when none).
func splitHost(hostport string) (string, string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// clip cuts a hostile value for a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// route says where a request's path goes: the MCP endpoint, or one of the documents a host's
// OAuth reads at the server's origin; anything else is not forwarded (ok false).
//
// The endpoint is "/", "/mcp" or the server's own path. A host that meets a 401 reads the
// protected resource metadata (RFC 9728) at /.well-known/oauth-protected-resource, with or
// without the endpoint's path after it (C25-AUTH, C26-AUTH §Protected Resource Metadata
// Discovery), and a host that finds none falls back to the authorization server metadata of
// the server's origin (RFC 8414 /.well-known/oauth-authorization-server, OpenID Connect
// Discovery /.well-known/openid-configuration). The authorization, token and registration
// endpoints those documents name are absolute URLs on the authorization server: the host goes
// there directly, not through the proxy.
func (f *httpFront) route(u *url.URL) (endpoint, ok bool) {
	p := u.Path
	switch p {
	case "/", "/mcp", "/mcp/", f.up.Path:
		return true, true
	}
	// No dot segments, doubled or encoded slashes: what the server's router would make of
	// them is its own business, and /.well-known/x/../../admin is not a metadata document.
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") {
		clean += "/"
	}
	if clean != p || strings.Contains(strings.ToLower(u.RawPath), "%2f") {
		return false, false
	}
	for _, doc := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if p == doc || strings.HasPrefix(p, doc+"/") {
			return false, true
		}
	}
	return false, false
}

// refusals rate-limits the proxy's notices of refused requests: a page or a flood may send
// thousands, and one line a second per reason tells the user as much.
type refusals struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

// note reports whether a refusal of kind should be reported now, and how many went unreported
// since the last report.
func (rf *refusals) note(kind string, now time.Time) (bool, int) {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.last == nil {
		rf.last, rf.held = map[string]time.Time{}, map[string]int{}
	}
	if now.Sub(rf.last[kind]) < time.Second {
		rf.held[kind]++
		return false, 0
	}
	n := rf.held[kind]
	rf.last[kind], rf.held[kind] = now, 0
	return true, n
}

// refuse answers a request the proxy does not forward: status, and a JSON-RPC error without an
// id (C25-TRANS §Security Warning allows that body), and reports it on stderr or the view.
func (f *httpFront) refuse(w http.ResponseWriter, r *http.Request, status int, kind, why string) {
	p := f.p
	if ok, more := f.refused.note(kind, p.opts.Now()); ok {
		msg := fmt.Sprintf("refused %s %s from %s (%d): %s", r.Method, clip(r.URL.Path), remoteIP(r), status, why)
		if more > 0 {
			msg += fmt.Sprintf(" (and %d more like it in the last second)", more)
		}
		p.notice(nil, "%s", msg)
	}
	// The request's body stays unread: close the connection instead of reading it, and let
	// no read wait for it (net/http would drain it, with no deadline, to keep the connection).
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	// No id: the request was not read, and the MCP schemas allow an error response without one
	// (JSONRPCErrorResponse), never with "id": null.
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0",
		"error": map[string]any{"code": -32000, "message": "mcptask proxy: " + why}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)+1))
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
