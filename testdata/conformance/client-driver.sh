#!/usr/bin/env bash
# client-driver.sh: mcptask as the client of one scenario of the official MCP conformance suite
# (@modelcontextprotocol/conformance), used exactly as a user's script would use it: `mcptask
# tools` and `mcptask call TOOL --args JSON --answer KEY=JSON`, nothing else.
#
# The suite runs:   client-driver.sh <server-url>
# with MCP_CONFORMANCE_SCENARIO (the scenario), MCP_CONFORMANCE_PROTOCOL_VERSION and, for some
# scenarios, MCP_CONFORMANCE_CONTEXT (JSON test data) in the environment.
#
# MCPTASK names the mcptask binary (default: mcptask on PATH). The protocol generation is left
# to mcptask's own detection (--protocol auto), as it would be for a user.
#
# Run by hand:
#   node testdata/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js \
#     client --command "testdata/conformance/client-driver.sh" --scenario tools_call
set -euo pipefail

url="${!#}"
mcptask="${MCPTASK:-mcptask}"
scenario="${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set: run me from the conformance suite}"

# A ledger (and tools/list cache) of its own, so that runs never see each other's state.
if [ -z "${MCPTASK_STATE:-}" ]; then
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
  export MCPTASK_STATE="$dir/tasks.json"
fi

mt() { "$mcptask" "$@" --server "$url"; }

case "$scenario" in
initialize | json-schema-ref-no-deref | request-metadata)
  # Connect, negotiate, list the tools; nothing to call.
  mt tools
  ;;
tools_call)
  mt call add_numbers --args '{"a": 2, "b": 3}'
  ;;
sse-retry)
  # The server closes the call's stream after a priming event with retry: 500; mcptask must
  # wait that long and resume with GET + Last-Event-ID.
  mt call test_reconnection --timeout 30s
  ;;
elicitation-sep1034-client-defaults)
  # The server elicits on the standalone GET stream during a plain tools/call. Accept with
  # empty content: the schema's defaults fill the omitted fields (SEP-1034).
  mt call test_client_elicitation_defaults --timeout 30s \
    --answer elicitation='{"action":"accept","content":{}}'
  ;;
sep-2322-client-request-state)
  ok='{"action":"accept","content":{"confirmed":true}}'
  mt call test_mrtr_echo_state --answer "confirm=$ok" --answer "*=$ok"
  mt call test_mrtr_unrelated
  mt call test_mrtr_no_state --answer "*=$ok"
  mt call test_mrtr_no_result_type
  ;;
http-standard-headers)
  mt tools
  mt call test_headers
  mt call my-hyphenated-tool
  ;;
http-custom-headers)
  # The scenario hands over the calls to make, with their arguments.
  n="$(jq '.toolCalls | length' <<<"$MCP_CONFORMANCE_CONTEXT")"
  for ((i = 0; i < n; i++)); do
    name="$(jq -r ".toolCalls[$i].name" <<<"$MCP_CONFORMANCE_CONTEXT")"
    args="$(jq -c ".toolCalls[$i].arguments" <<<"$MCP_CONFORMANCE_CONTEXT")"
    mt call "$name" --args "$args"
  done
  ;;
http-invalid-tool-headers)
  # Call every tool mcptask lists (it leaves out the ones with invalid x-mcp-header
  # annotations, with a warning), then try one it left out by name: mcptask must refuse it.
  for name in $(mt tools --json | jq -r '.tools[].name'); do
    mt call "$name" --args '{"region": "us-west1"}'
  done
  if mt call invalid_empty_header --args '{"value": "x"}'; then
    echo "client-driver: mcptask called a tool whose x-mcp-header annotation is invalid" >&2
    exit 1
  fi
  ;;
json-schema-2020-12-preservation)
  # Send the focal tool's inputSchema back, verbatim, through the echo tool.
  schema="$(mt tools --json | jq -c '.tools[] | select(.name == "json_schema_2020_12_tool") | .inputSchema')"
  mt call json_schema_echo --args "{\"schema\": $schema}"
  ;;
*)
  echo "client-driver: no recipe for scenario $scenario" >&2
  exit 2
  ;;
esac
