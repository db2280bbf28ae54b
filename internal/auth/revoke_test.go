package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// revocationServer is an authorization server whose metadata names revocation (or not) and
// whose revocation endpoint answers as revoke says, recording every request it got.
type revocationServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	forms    []map[string][]string
}

func newRevocationServer(t *testing.T, revocation string, revoke http.HandlerFunc) *revocationServer {
	t.Helper()
	s := &revocationServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		md := map[string]any{"issuer": s.URL, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token"}
		if revocation != "" {
			md["revocation_endpoint"] = strings.ReplaceAll(revocation, "{base}", s.URL)
		}
		_ = json.NewEncoder(w).Encode(md)
	})
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.forms = append(s.forms, r.PostForm)
		s.mu.Unlock()
		revoke(w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *revocationServer) got() ([]*http.Request, []map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.forms
}

func testCredential(issuer string, client Client) *Credential {
	return &Credential{ServerURL: "http://127.0.0.1:1/mcp", Resource: "http://127.0.0.1:1/mcp", Issuer: issuer,
		Client: client, AccessToken: "AT-secret", RefreshToken: "RT-secret"}
}

// TestRevokeSendsTheRefreshTokenWithClientAuth: RFC 7009 §2.1: the refresh token with its
// hint, and the client authentication of the token endpoint (here client_secret_basic of a
// dynamically registered client).
func TestRevokeSendsTheRefreshTokenWithClientAuth(t *testing.T) {
	s := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {})
	c := testCredential("", Client{ID: "cid", Secret: "csecret", AuthMethod: MethodSecretBasic, Registration: RegDynamic})
	c.Issuer = s.URL
	endpoint, err := Revoke(context.Background(), s.Client(), c, RevokeOptions{})
	if err != nil || endpoint != s.URL+"/revoke" {
		t.Fatalf("Revoke = %q, %v", endpoint, err)
	}
	reqs, forms := s.got()
	if len(reqs) != 1 {
		t.Fatalf("%d revocation requests", len(reqs))
	}
	id, secret, ok := reqs[0].BasicAuth()
	if !ok || id != "cid" || secret != "csecret" || forms[0]["token"][0] != "RT-secret" || forms[0]["token_type_hint"][0] != "refresh_token" {
		t.Fatalf("basic %v %q; form %v", ok, id, forms[0])
	}
	if _, ok := forms[0]["client_secret"]; ok {
		t.Fatal("the secret went in the body as well")
	}
}

// TestRevokeNeverFollowsARedirect: a revocation endpoint that redirects gets no second
// request from mcptask; the token and the client's secret never reach the redirect's target.
func TestRevokeNeverFollowsARedirect(t *testing.T) {
	var mu sync.Mutex
	var stolen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.PostForm.Encode()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer thief.Close()
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		s := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, thief.URL+"/collect", code)
		})
		c := testCredential(s.URL, Client{ID: "cid", Secret: "csecret", AuthMethod: MethodSecretPost, Registration: RegDynamic})
		_, err := Revoke(context.Background(), s.Client(), c, RevokeOptions{})
		if err == nil || !strings.Contains(err.Error(), "not followed") {
			t.Fatalf("HTTP %d: Revoke = %v, want a redirect that was not followed", code, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) > 0 {
		t.Fatalf("the redirect target got %v", stolen)
	}
}

// TestRevokeFailures: no revocation endpoint, a refusal, an endpoint that is not https, and a
// pre-registered client whose secret was not given: each is an error that says so, and only
// the refusal reached the server.
func TestRevokeFailures(t *testing.T) {
	none := newRevocationServer(t, "", nil)
	c := testCredential(none.URL, Client{ID: "cid", AuthMethod: MethodNone, Registration: RegDynamic})
	if _, err := Revoke(context.Background(), none.Client(), c, RevokeOptions{}); !errors.Is(err, ErrNoRevocationEndpoint) {
		t.Fatalf("no endpoint: %v", err)
	}

	busy := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c = testCredential(busy.URL, Client{ID: "cid", AuthMethod: MethodNone, Registration: RegDynamic})
	if _, err := Revoke(context.Background(), busy.Client(), c, RevokeOptions{}); err == nil || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("503: %v", err)
	}
	if _, forms := busy.got(); len(forms) != 1 || forms[0]["client_id"][0] != "cid" {
		t.Fatalf("a public client's revocation: %v", forms)
	}

	plain := newRevocationServer(t, "http://auth.example.com/revoke", nil)
	c = testCredential(plain.URL, Client{ID: "cid", AuthMethod: MethodNone, Registration: RegDynamic})
	if _, err := Revoke(context.Background(), plain.Client(), c, RevokeOptions{}); err == nil || !strings.Contains(err.Error(), "not an https:// URL") {
		t.Fatalf("http endpoint: %v", err)
	}

	pre := newRevocationServer(t, "{base}/revoke", func(w http.ResponseWriter, r *http.Request) {})
	c = testCredential(pre.URL, Client{ID: "cid", AuthMethod: MethodSecretPost, Registration: RegPreRegistered})
	if _, err := Revoke(context.Background(), pre.Client(), c, RevokeOptions{}); err == nil || !strings.Contains(err.Error(), "--client-secret-env") {
		t.Fatalf("pre-registered without its secret: %v", err)
	}
	if reqs, _ := pre.got(); len(reqs) != 0 {
		t.Fatal("a revocation without client authentication was sent")
	}
	if _, err := Revoke(context.Background(), pre.Client(), c, RevokeOptions{ClientSecret: "given"}); err != nil {
		t.Fatalf("pre-registered with its secret: %v", err)
	}
	if _, forms := pre.got(); len(forms) != 1 || forms[0]["client_secret"][0] != "given" {
		t.Fatalf("form %v", forms)
	}

	c.RefreshToken, c.AccessToken = "", ""
	if _, err := Revoke(context.Background(), pre.Client(), c, RevokeOptions{}); !errors.Is(err, ErrNothingToRevoke) {
		t.Fatalf("nothing stored: %v", err)
	}
}
