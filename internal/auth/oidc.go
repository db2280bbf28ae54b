package auth

import "slices"

// OpenID providers are the authorization servers most organisations deploy, and they differ
// from a plain OAuth 2.1 server in how a client gets a refresh token: only by asking for the
// offline_access scope, and only together with prompt=consent.

// isOpenIDProvider reports whether the authorization server is an OpenID provider: its
// metadata carries the members OpenID Connect Discovery 1.0 §3 requires of every provider's
// openid-configuration (subject_types_supported, id_token_signing_alg_values_supported), or it
// offers the openid scope.
func (m *ServerMetadata) isOpenIDProvider() bool {
	return len(m.SubjectTypesSupported) > 0 || len(m.IDTokenSigningAlgValuesSupported) > 0 || slices.Contains(m.ScopesSupported, "openid")
}

// promptConsent reports whether an authorization request for scopes must carry
// prompt=consent. OpenID Connect Core 1.0 §11: "When offline access is requested, a prompt
// parameter value of consent MUST be used unless other conditions for processing the request
// permitting offline access to the requested resources are in place", and the provider "MUST
// ignore the offline_access request unless the Client is using a response_type value that
// would result in an Authorization Code being returned" and prompt contains consent; so
// without it an OpenID provider quietly issues no refresh token. mcptask asks for
// offline_access only where the server's scopes_supported lists it (initialScopes), sends
// prompt=consent only to OpenID providers, and not to one whose prompt_values_supported
// leaves consent out.
func promptConsent(m *ServerMetadata, scopes []string) bool {
	if !slices.Contains(scopes, "offline_access") || !m.isOpenIDProvider() {
		return false
	}
	return len(m.PromptValuesSupported) == 0 || slices.Contains(m.PromptValuesSupported, "consent")
}
