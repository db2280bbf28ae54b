// ts-client-v2.mjs: the official TypeScript client v2 (@modelcontextprotocol/client) with the
// Tasks extension package (@modelcontextprotocol/ext-tasks) against an MCP 2026-07-28 server.
// Run: node testdata/interop/ts-client-v2.mjs <url>. It prints one JSON line per step and
// exits non-zero on the first failure; cmd/interop_test.go runs it against the demo server.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const url = process.argv[2];
const version = '2026-07-28';
const clientInfo = { name: 'mcptask-interop-ts-v2', version: '1.0.0' };
const clientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const step = (name, value) => console.log(JSON.stringify({ step: name, value }));

const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  versionNegotiation: { mode: { pin: version } }
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
step('era', client.getProtocolEra());

const { tools } = await client.listTools();
step('tools', tools.map((t) => t.name));

const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello from the TS client' } });
step('echo', echo.content?.[0]?.text);

// A 2026-07-28 Tasks server needs a raw request path and the request framing (the package's
// README): the host sends the request (it gives method and params; the host adds the
// JSON-RPC envelope) with the routing headers of C26-HTTP, and hands back {kind, result|error}.
let nextId = 1000;
const rawDispatch = async (request, options) => {
  const message = { jsonrpc: '2.0', id: nextId++, ...request };
  const params = message.params ?? {};
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': version,
    'Mcp-Method': message.method,
    ...(options?.context?.headers ?? {})
  };
  const name = message.method === 'tools/call' ? params.name : params.taskId;
  if (name !== undefined) headers['Mcp-Name'] = String(name);
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal: options?.signal });
  const text = await res.text();
  let reply;
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    reply = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5))).find((m) => m.id === message.id);
  } else {
    reply = JSON.parse(text);
  }
  return reply.error ? { kind: 'error', error: reply.error } : { kind: 'result', result: reply.result };
};
const session = createTaskSessionFromClient(client, {
  endpointId: 'mcptask-demo',
  rawDispatch,
  v2RequestFraming: { protocolVersion: version, clientInfo, clientCapabilities }
});
try {
  const execution = await session.callTool('sleep', { seconds: 2 });
  const { outcome } = await execution.settle();
  const result = resultFromTaskOutcome(outcome);
  step('sleep', result.content?.[0]?.text);
} finally {
  await session.close();
  await client.close();
}
