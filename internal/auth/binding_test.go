package auth

import "testing"

// TestPickIssuer: among the authorization servers a PRM lists, the one given with --issuer is
// chosen wherever it stands; one not listed is refused; a client secret without an issuer is
// refused; without either, the first listed is taken (RFC 9728 §7.6 leaves it to the client).
func TestPickIssuer(t *testing.T) {
	listed := []string{"https://a.example", "https://b.example"}
	for _, c := range []struct {
		cfg    Config
		want   string
		reason Reason
	}{
		{Config{}, "https://a.example", ""},
		{Config{ClientID: "public"}, "https://a.example", ""},
		{Config{ClientIssuer: "https://b.example"}, "https://b.example", ""},
		{Config{ClientID: "ci", ClientSecret: "s", ClientIssuer: "https://b.example"}, "https://b.example", ""},
		{Config{ClientID: "ci", ClientSecret: "s", ClientIssuer: "https://c.example"}, "", ReasonIssuerNotAllowed},
		{Config{ClientID: "ci", ClientSecret: "s"}, "", ReasonIssuerRequired},
		// Issuers are compared as strings (RFC 8414 §3.3): a trailing slash is another issuer.
		{Config{ClientIssuer: "https://b.example/"}, "", ReasonIssuerNotAllowed},
	} {
		s := &Session{cfg: c.cfg}
		got, err := s.pickIssuer(listed)
		if got != c.want || ReasonOf(err) != c.reason {
			t.Errorf("%+v: %q, %v; want %q, reason %q", c.cfg, got, err, c.want, c.reason)
		}
	}
}
