package cmd

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
// must not be, and every registration, authorization request, token request and bearer it
// saw, so tests can tell what mcptask sent. Its misbehaviours (set with configure) make it
// the server that a client must refuse or give up on.
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

	registrations  []string            // the redirect URI of every registration request
	authorizations []codeGrant         // every authorization request, in order
	grantTypes     []string            // the grant_type of every token request
	bearers        map[string]int      // access token -> requests to /mcp that carried it
	granted        map[string][]string // access or refresh token -> the scopes it grants

	// Misbehaviours and options; set them with configure.
	prmResource    string // the resource the PRM names ("": the MCP endpoint)
	metadataIssuer string // the issuer the AS metadata names ("": the real one)
	issParam       string // the iss of the authorization response ("": the real one)
	omitIss        bool   // no iss in the authorization response, though the metadata promises one
	requireScope   string // /mcp answers 403 insufficient_scope to tokens without this scope
	withholdScope  string // a scope the AS never grants, whatever is asked
	cimd           bool   // the AS supports Client ID Metadata Documents
	tokenRedirect  string // the token endpoint reads the request, then answers 307 to this origin
	tokenEndpoint  string // the token_endpoint the AS metadata names ("": the real one)
	prmRedirect    string // the PRM answers 302 to this URL
}

type codeGrant struct {
	challenge, client, redirect, resource, scope string
}

// configure changes the server's behaviour (under its lock: handlers read it concurrently).
func (o *oauthServer) configure(fn func(o *oauthServer)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fn(o)
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{t: t, clients: map[string]string{}, codes: map[string]codeGrant{}, access: map[string]time.Time{},
		refresh: map[string]bool{}, lifetime: time.Hour, bearers: map[string]int{}, granted: map[string][]string{}}
	d, err := demo.New(demo.Options{StepDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mcp := specChecked(t, d.Handler(), false) // every message both sides send is checked against the spec
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		resource, redirect := cmp.Or(o.prmResource, o.URL), o.prmRedirect
		o.mu.Unlock()
		if redirect != "" {
			http.Redirect(w, r, redirect, http.StatusFound)
			return
		}
		writeJSONBody(w, 200, map[string]any{"resource": resource, "authorization_servers": []string{o.base}, "scopes_supported": []string{"tasks"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		issuer, cimd, tokenEndpoint := cmp.Or(o.metadataIssuer, o.base), o.cimd, cmp.Or(o.tokenEndpoint, o.base+"/token")
		o.mu.Unlock()
		writeJSONBody(w, 200, map[string]any{
			"issuer": issuer, "authorization_endpoint": o.base + "/authorize", "token_endpoint": tokenEndpoint,
			"registration_endpoint": o.base + "/register", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"tasks", "offline_access"}, "response_types_supported": []string{"code"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_post", "none"},
			"authorization_response_iss_parameter_supported": true,
			"client_id_metadata_document_supported":          cimd,
		})
	})
	mux.HandleFunc("POST /register", o.register)
	mux.HandleFunc("GET /authorize", o.authorize)
	mux.HandleFunc("POST /token", o.token)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		if ok {
			o.bearers[tok]++
		}
		exp, known := o.access[tok]
		need, scopes := o.requireScope, o.granted[tok]
		o.mu.Unlock()
		if !ok || !known || time.Now().After(exp) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.base+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSONBody(w, 401, map[string]any{"error": "invalid_token"})
			return
		}
		if need != "" && !slices.Contains(scopes, need) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+need+`", resource_metadata="`+o.base+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSONBody(w, 403, map[string]any{"error": "insufficient_scope"})
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
	o.mu.Lock()
	o.registrations = append(o.registrations, strings.Join(req.RedirectURIs, " "))
	o.mu.Unlock()
	if req.ApplicationType != "native" || len(req.RedirectURIs) != 1 || !strings.HasPrefix(req.RedirectURIs[0], "http://127.0.0.1:") {
		writeJSONBody(w, 400, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	o.mu.Lock()
	id, secret := "client-"+hex.EncodeToString([]byte(time.Now().Format(time.RFC3339Nano))), o.mint("csecret-")
	o.clients[id] = secret
	// RFC 7592 §3: the registration access token manages the client; a trace must hide it.
	rat := o.mint("rat-")
	o.mu.Unlock()
	writeJSONBody(w, 201, map[string]any{"client_id": id, "client_secret": secret, "token_endpoint_auth_method": "client_secret_post", "redirect_uris": req.RedirectURIs,
		"registration_access_token": rat, "registration_client_uri": o.base + "/register/" + id})
}

func (o *oauthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.authorizations = append(o.authorizations, codeGrant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scope: q.Get("scope")})
	if _, ok := o.clients[q.Get("client_id")]; !ok || q.Get("code_challenge_method") != "S256" || q.Get("resource") != o.URL {
		http.Error(w, "bad authorization request", 400)
		return
	}
	code := o.mint("code-")
	o.codes[code] = codeGrant{challenge: q.Get("code_challenge"), client: q.Get("client_id"), redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scope: q.Get("scope")}
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {cmp.Or(o.issParam, o.base)}}
	if o.omitIss {
		v.Del("iss")
	}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (o *oauthServer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := r.PostForm
	o.mu.Lock()
	defer o.mu.Unlock()
	o.resources = append(o.resources, f.Get("resource"))
	o.grantTypes = append(o.grantTypes, f.Get("grant_type"))
	if f.Get("client_secret") != "" {
		o.secrets = append(o.secrets, f.Get("client_secret"))
	}
	if o.tokenRedirect != "" {
		for _, k := range []string{"code", "code_verifier", "refresh_token"} {
			if v := f.Get(k); v != "" {
				o.secrets = append(o.secrets, v)
			}
		}
		w.Header().Set("Location", o.tokenRedirect+"/token")
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	if sec, ok := o.clients[f.Get("client_id")]; !ok || sec != f.Get("client_secret") {
		writeJSONBody(w, 401, map[string]any{"error": "invalid_client"})
		return
	}
	if f.Get("resource") != o.URL {
		writeJSONBody(w, 400, map[string]any{"error": "invalid_target"})
		return
	}
	var scopes []string
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
		for _, sc := range strings.Fields(g.scope) {
			if sc != o.withholdScope {
				scopes = append(scopes, sc)
			}
		}
	case "refresh_token":
		if !o.refresh[f.Get("refresh_token")] {
			o.refused++
			writeJSONBody(w, 400, map[string]any{"error": "invalid_grant", "error_description": "refresh token expired or already used"})
			return
		}
		o.refresh[f.Get("refresh_token")] = false // rotation: each refresh token works once
		o.refreshes++
		scopes = o.granted[f.Get("refresh_token")]
	default:
		writeJSONBody(w, 400, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	if len(scopes) == 0 {
		scopes = []string{"tasks"}
	}
	at, rt := o.mint("at-"), o.mint("rt-")
	o.access[at] = time.Now().Add(o.lifetime)
	o.refresh[rt] = true
	o.granted[at], o.granted[rt] = scopes, scopes
	writeJSONBody(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(o.lifetime / time.Second), "refresh_token": rt, "scope": strings.Join(scopes, " "),
		"id_token": o.mint("idt-")})
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

// issueAccessToken mints an access token the MCP endpoint accepts, as if obtained elsewhere
// (what a user passes with --bearer-env or --header).
func (o *oauthServer) issueAccessToken() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := o.mint("at-")
	o.access[at] = time.Now().Add(o.lifetime)
	o.granted[at] = []string{"tasks"}
	return at
}

// preRegister registers a client by hand, the way an administrator would: a confidential
// one (it returns the secret) or, with public, one without a secret (a Client ID Metadata
// Document URL, say).
func (o *oauthServer) preRegister(id string, public bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	secret := ""
	if !public {
		secret = o.mint("csecret-")
	}
	o.clients[id] = secret
	return secret
}

// seen says how many requests to /mcp carried the bearer tok.
func (o *oauthServer) seen(tok string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bearers[tok]
}

// oauthTraffic is what mcptask asked of the authorization server so far.
type oauthTraffic struct {
	Registrations  []string    // redirect URIs registered
	Authorizations []codeGrant // authorization requests
	GrantTypes     []string    // token requests
	Clients        int         // clients known (registered or pre-registered)
}

func (o *oauthServer) traffic() oauthTraffic {
	o.mu.Lock()
	defer o.mu.Unlock()
	return oauthTraffic{Registrations: slices.Clone(o.registrations), Authorizations: slices.Clone(o.authorizations),
		GrantTypes: slices.Clone(o.grantTypes), Clients: len(o.clients)}
}

var _ = fmt.Sprintf
