package proxy

import (
	"net/http"
	"testing"
)

// BenchmarkInspectTasksGet measures what the proxy adds to one tasks/get on top of relaying
// it: decoding and linting the request and the answer.
func BenchmarkInspectTasksGet(b *testing.B) {
	p := New(Options{})
	h := p.hostFor("m:127.0.0.1|bench/1", "bench/1 @127.0.0.1")
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"5d65a3f0-1c2b-4d5e-8f90-123456789abc",` + modernMeta + `}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcptask-demo","version":"0.1.0"}},"createdAt":"2026-11-24T18:38:26.110Z","lastUpdatedAt":"2026-11-24T18:38:26.211Z","pollIntervalMs":1000,"resultType":"complete","status":"working","statusMessage":"step 1","taskId":"5d65a3f0-1c2b-4d5e-8f90-123456789abc","ttlMs":3600000}}`)
	hdr := http.Header{"Mcp-Method": {"tasks/get"}, "Mcp-Name": {"5d65a3f0-1c2b-4d5e-8f90-123456789abc"}, "Mcp-Protocol-Version": {"2026-07-28"}}
	b.ReportAllocs()
	for b.Loop() {
		m, params, _ := decodeHostMessage(req)
		x := p.hostMessage(h, m, params, hdr)
		p.fromServer(h, x, resp)
	}
}
