package auth

import "testing"

// TestPromptConsent: prompt=consent goes with offline_access to OpenID providers only (OpenID
// Connect Core §11), never to a plain OAuth server that merely adopted offline_access, and not
// to a provider whose prompt_values_supported leaves consent out.
func TestPromptConsent(t *testing.T) {
	op := ServerMetadata{ScopesSupported: []string{"openid", "offline_access"}, SubjectTypesSupported: []string{"public"}, IDTokenSigningAlgValuesSupported: []string{"RS256"}}
	for _, tc := range []struct {
		name   string
		md     ServerMetadata
		scopes []string
		want   bool
	}{
		{"openid provider, offline_access", op, []string{"mcp:tools", "offline_access"}, true},
		{"openid provider, no offline_access", op, []string{"mcp:tools"}, false},
		{"openid-configuration members only", ServerMetadata{SubjectTypesSupported: []string{"public"}}, []string{"offline_access"}, true},
		{"openid scope only", ServerMetadata{ScopesSupported: []string{"openid", "offline_access"}}, []string{"offline_access"}, true},
		{"plain OAuth server with offline_access", ServerMetadata{ScopesSupported: []string{"tasks", "offline_access"}}, []string{"tasks", "offline_access"}, false},
		{"provider without consent prompts", ServerMetadata{SubjectTypesSupported: []string{"public"}, PromptValuesSupported: []string{"none", "login"}}, []string{"offline_access"}, false},
		{"provider with consent prompts", ServerMetadata{SubjectTypesSupported: []string{"public"}, PromptValuesSupported: []string{"none", "login", "consent"}}, []string{"offline_access"}, true},
	} {
		if got := promptConsent(&tc.md, tc.scopes); got != tc.want {
			t.Errorf("%s: promptConsent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
