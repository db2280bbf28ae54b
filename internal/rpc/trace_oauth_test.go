package rpc

import (
	"strings"
	"testing"

	"github.com/mcptask/mcptask/internal/redact"
)

func TestRedactOAuth(t *testing.T) {
	tr := &tracer{red: redact.New(nil)}
	u := tr.red.URL("http://127.0.0.1:5/callback?code=SECRETCODE&state=s1&iss=https%3A%2F%2Fas")
	if strings.Contains(u, "SECRETCODE") || !strings.Contains(u, "state=s1") {
		t.Errorf("URL: %s", u)
	}
	form := tr.authBody("application/x-www-form-urlencoded", []byte("grant_type=refresh_token&refresh_token=RT1&client_secret=CS&client_assertion=JWT&resource=https%3A%2F%2Fm"))
	for _, s := range []string{"RT1", "CS", "JWT"} {
		if strings.Contains(string(form), s) {
			t.Errorf("form keeps %s: %s", s, form)
		}
	}
	if !strings.Contains(string(form), "grant_type=refresh_token") {
		t.Errorf("form lost its grant type: %s", form)
	}
	js := tr.authBody("application/json; charset=utf-8", []byte(`{"access_token":"AT","refresh_token":"RT","id_token":"ID","token_type":"Bearer","expires_in":60,"registration_access_token":"RAT"}`))
	for _, s := range []string{`"AT"`, `"RT"`, `"ID"`, `"RAT"`} {
		if strings.Contains(string(js), s) {
			t.Errorf("JSON keeps %s: %s", s, js)
		}
	}
	if !strings.Contains(string(js), `"expires_in":60`) {
		t.Errorf("JSON lost expires_in: %s", js)
	}
	if b := tr.authBody("text/html", []byte(`<a href="/cb?code=X">Found</a>`)); b != nil {
		t.Errorf("HTML kept: %s", b)
	}
}
