#!/bin/sh
# auth-driver.sh SERVER_URL: mcptask as the client of one auth/* scenario of the official
# conformance suite (npx conformance client --command testdata/conformance/auth-driver.sh).
#
# It runs `mcptask tools`, then `mcptask call test-tool --args '{}'`, in a fresh state
# directory, with --browser follow (the suite's authorization endpoint approves at once and
# redirects to mcptask's loopback listener). Pre-registered credentials come from
# MCP_CONFORMANCE_CONTEXT, as the suite hands them to every client. MCPTASK_BIN names the
# mcptask binary (default: mcptask on PATH).
set -eu
url="$1"
bin="${MCPTASK_BIN:-mcptask}"
ctx="${MCP_CONFORMANCE_CONTEXT:-}"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"

state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state" MCPTASK_STATE="$state/tasks.json" MCPTASK_AUTH_STORE=file

# field NAME: a string member of the context (JSON.stringify output, no spaces), with JSON
# escapes such as \n turned into the characters they stand for.
field() {
	v=$(printf '%s' "$ctx" | sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p")
	printf '%b' "$v"
}

set -- --server "$url" --browser follow \
	--client-metadata-url https://conformance-test.local/client-metadata.json
client_id=$(field client_id)
if [ -n "$client_id" ]; then
	set -- "$@" --client-id "$client_id"
	if [ -n "$(field client_secret)" ]; then
		MCPTASK_CONFORMANCE_CLIENT_SECRET=$(field client_secret)
		export MCPTASK_CONFORMANCE_CLIENT_SECRET
		set -- "$@" --client-secret-env MCPTASK_CONFORMANCE_CLIENT_SECRET
	fi
	if [ -n "$(field private_key_pem)" ]; then
		field private_key_pem >"$state/client-key.pem"
		set -- "$@" --client-key-file "$state/client-key.pem"
	fi
	case "$scenario" in
	auth/client-credentials-*) set -- "$@" --grant client-credentials ;;
	esac
	# A client secret or key is sent only to the issuer it was registered at (--issuer).
	# The suite names it for auth/pre-registration; for the client-credentials scenarios it
	# names none, so the driver does what a person would: run once, read the authorization
	# server the refusal (reason issuer_required) names, and pass it.
	issuer=$(field issuer)
	if [ -z "$issuer" ] && { [ -n "$(field client_secret)" ] || [ -n "$(field private_key_pem)" ]; }; then
		refusal=$("$bin" tools "$@" --json 2>&1 || true)
		case "$refusal" in
		*'"reason":"issuer_required"'*)
			issuer=$(printf '%s\n' "$refusal" | sed -n 's/.*add --issuer \([^ ;"]*\).*/\1/p' | head -n 1) ;;
		esac
	fi
	if [ -n "$issuer" ]; then
		set -- "$@" --issuer "$issuer"
	fi
fi

"$bin" tools "$@"
"$bin" call test-tool --args '{}' "$@"
