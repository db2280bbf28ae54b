#!/usr/bin/env bash
# get-vs-curl.sh: wall time of `mcptask get <id>` as a whole process against curl sending the
# same tasks/get to the same demo server (issue 2: within 2x). Run from the repository root:
#   bench/get-vs-curl.sh [runs]
set -euo pipefail
runs=${1:-200}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/mcptask" .
port=$(( 20000 + RANDOM % 20000 ))
"$work/mcptask" demo serve --addr "127.0.0.1:$port" --step 1h 2>"$work/server.log" &
server=$!
url="http://127.0.0.1:$port/mcp"
for _ in $(seq 100); do curl -s -o /dev/null "$url" -X POST && break; sleep 0.05; done
export MCPTASK_STATE="$work/tasks.json"
id=$("$work/mcptask" call forever --detach --server "$url" --protocol 2026-07-28)
body=$(printf '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"%s","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"}}}}' "$id")

time_runs() { # name, command...
	local name=$1; shift
	local start end
	start=$(date +%s%N)
	for _ in $(seq "$runs"); do "$@" >/dev/null; done
	end=$(date +%s%N)
	echo "$name $(( (end - start) / runs / 1000 ))"
}
# One check that both really answer with the task before timing them.
"$work/mcptask" get "$id" --json | grep -q "\"taskId\"" || { echo "mcptask get failed" >&2; exit 1; }
curl -s -X POST "$url" -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tasks/get" -H "Mcp-Name: $id" --data "$body" | grep -q "\"status\":\"working\"" || { echo "curl tasks/get failed" >&2; exit 1; }
m=$(time_runs mcptask "$work/mcptask" get "$id")
c=$(time_runs curl curl -s -X POST "$url" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tasks/get' -H "Mcp-Name: $id" \
	--data "$body")
mu=${m#* }; cu=${c#* }
echo "runs: $runs"
echo "mcptask get: ${mu} us/run"
echo "curl:        ${cu} us/run"
awk -v a="$mu" -v b="$cu" 'BEGIN { printf "ratio:       %.2fx (target <= 2x)\n", a / b }'
