package cmd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptask/mcptask/internal/demo"
)

// oauthServer is a real OAuth 2.1 authorization server and protected MCP server on one
// loopback origin, written for the tests: protected resource metadata, RFC 8414 metadata,
// Dynamic Client Registration (confidential clients, client_secret_post), an authorization
// endpoint that approves at once (for --browser follow), a token endpoint with PKCE checks and
// rotating refresh tokens (a refresh token works once), and the demo MCP server behind a
// bearer check. It remembers every secret it issued so tests can look for them where they
// must not be.
type oauthServer struct {
	t    *testing.T
	URL  string // the MCP endpoint
	base string

	mu        sync.Mutex
	clients   map[string]string    // client_id -> client_secret
	codes     map[string]codeGrant // code -> grant
	access    map[string]time.Time // access token -> expiry
	refresh   map[string]bool      // refresh token -> still valid
	secrets   []string             // every code, verifier, token and client secret seen
	refreshes int                  // refresh grants answered with new tokens
	refused   int                  // refresh grants refused
	resources []string             // the resource parameter of every token request
	lifetime  time.Duration
}

type codeGrant struct {
	challenge, client, redirect, resource, scope string
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{t: t, clients: map[string]string{}, codes: map[string]codeGrant{}, access: map[string]time.Time{},
		refresh: map[string]bool{}, lifetime: time.Hour}
	d, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mcp := specChecked(t, d.Handler(), false) // every message both sides send is checked against the spec
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, 200, map[string]any{"resource": o.URL, "authorization_servers": []string{o.base}, "scopes_supported": []string{"tasks"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, 200, map[string]any{
			"issuer": o.base, "authorization_endpoint": o.base + "/authorize", "token_endpoint": o.base + "/token",
			"registration_endpoint": o.base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"tasks", "offline_access"}, "response_types_supported": []string{"code"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_post", "none"},
			"authorization_response_iss_parameter_supported": true,
		})
	})
	mux.HandleFunc("POST /register", o.register)
	mux.HandleFunc("GET /authorize", o.authorize)
	mux.HandleFunc("POST /token", o.token)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		exp, known := o.access[tok]
		o.mu.Unlock()
		if !ok || !known || time.Now().After(exp) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.base+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSONBody(w, 401, map[string]any{"error": "invalid_token"})
			return
		}
		mcp.ServeHTTP(w, r)
	}))
	hs := httptest.NewServer(mux)
	o.base = hs.URL
	o.URL = hs.URL + "/mcp"
	t.Cleanup(func() { hs.Close(); d.Close() })
	return o
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (o *oauthServer) mint(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	s := prefix + hex.EncodeToString(b)
	o.secrets = append(o.secrets, s)
	return s
}

func (o *oauthServer) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs    []string `json:"redirect_uris"`
		ApplicationType string   `json:"application_type"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if req.ApplicationType != "native" || len(req.RedirectURIs) != 1 || !strings.HasPrefix(req.RedirectURIs[0], "http://127.0.0.1:") {
		writeJSONBody(w, 400, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	o.mu.Lock()
	id, secret := "client-"+hex.EncodeToString([]byte(time.Now().Format(time.RFC3339Nano))), o.mint("csecret-")
	o.clients[id] = secret
	o.mu.Unlock()
	writeJSONBody(w, 201, map[string]any{"client_id": id, "client_secret": secret, "token_endpoint_auth_method": "client_secret_post", "redirect_uris": req.RedirectURIs})
}

func (o *oauthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.clients[q.Get("client_id")]; !ok || q.Get("code_challenge_method") != "S256" || q.Get("resource") != o.URL {
		http.Error(w, "bad authorization request", 400)
		return
	}
	code := o.mint("code-")
	o.codes[code] = codeGrant{challenge: q.Get("code_challenge"), client: q.Get("client_id"), redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scope: q.Get("scope")}
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {o.base}}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (o *oauthServer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := r.PostForm
	o.mu.Lock()
	defer o.mu.Unlock()
	o.resources = append(o.resources, f.Get("resource"))
	if f.Get("client_secret") != "" {
		o.secrets = append(o.secrets, f.Get("client_secret"))
	}
	if sec, ok := o.clients[f.Get("client_id")]; !ok || sec != f.Get("client_secret") {
		writeJSONBody(w, 401, map[string]any{"error": "invalid_client"})
		return
	}
	if f.Get("resource") != o.URL {
		writeJSONBody(w, 400, map[string]any{"error": "invalid_target"})
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := o.codes[f.Get("code")]
		delete(o.codes, f.Get("code"))
		o.secrets = append(o.secrets, f.Get("code_verifier"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || g.redirect != f.Get("redirect_uri") {
			writeJSONBody(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		if !o.refresh[f.Get("refresh_token")] {
			o.refused++
			writeJSONBody(w, 400, map[string]any{"error": "invalid_grant", "error_description": "refresh token expired or already used"})
			return
		}
		o.refresh[f.Get("refresh_token")] = false // rotation: each refresh token works once
		o.refreshes++
	default:
		writeJSONBody(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	at, rt := o.mint("at-"), o.mint("rt-")
	o.access[at] = time.Now().Add(o.lifetime)
	o.refresh[rt] = true
	writeJSONBody(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(o.lifetime / time.Second), "refresh_token": rt, "scope": "tasks"})
}

// expireAccessTokens makes the server refuse every access token issued so far (as if their
// lifetime had passed), so the next request gets a 401.
func (o *oauthServer) expireAccessTokens() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.access {
		o.access[k] = time.Now().Add(-time.Second)
	}
}

// revokeRefreshTokens makes every refresh token issued so far invalid.
func (o *oauthServer) revokeRefreshTokens() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.refresh {
		o.refresh[k] = false
	}
}

func (o *oauthServer) stats() (refreshes, refused int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refreshes, o.refused
}

func (o *oauthServer) allSecrets() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.secrets...)
}

var _ = fmt.Sprintf
