// A host built on the official TypeScript client v2 (@modelcontextprotocol/client) with the
// tasks extension (@modelcontextprotocol/ext-tasks), for mcptask's proxy tests. It calls one
// tool, follows the task the way ext-tasks does, and prints one JSON line per thing it sees on
// stdout: {"event":"connected","era":…}, {"event":"task","taskId":…,"status":…},
// {"event":"outcome","status":…,"result":…}. A test can kill it at any point.
//
//   node proxy-host-v2.mjs (--http URL | --stdio '["cmd","arg",…]') --tool NAME [--args JSON] [--era auto|legacy]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient, toolDeclarationFromMcpTool } from "@modelcontextprotocol/ext-tasks/client";

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const clientInfo = { name: "ts-client-v2", version: "2.4.0" };

const transport = opts.http
  ? new StreamableHTTPClientTransport(new URL(opts.http))
  : (() => {
      const [command, ...args] = JSON.parse(opts.stdio);
      return new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
    })();
// "auto" probes with server/discover and speaks 2026-07-28 to a server that offers it.
const client = new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: opts.era ?? "auto" } });
await client.connect(transport);
const era = client.getProtocolEra();
out({ event: "connected", era });

// The host's own request coordinator for 2026-07-28 task traffic, which the SDK's codecs do
// not carry (ext-tasks: "rawDispatch must use the host coordinator that owns request IDs and
// response matching"): requests go out on the client's transport with ids of their own, and
// their responses are taken off the transport before the client sees them.
const waiting = new Map();
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg && msg.id !== undefined && !("method" in msg) && waiting.has(msg.id)) {
    const resolve = waiting.get(msg.id);
    waiting.delete(msg.id);
    resolve(msg);
    return;
  }
  onmessage?.(msg, extra);
};
let rawID = 0;
async function rawDispatch(request) {
  const id = `host-${++rawID}`;
  const answer = new Promise((resolve) => waiting.set(id, resolve));
  await transport.send({ ...request, jsonrpc: "2.0", id });
  const msg = await answer;
  return msg.error ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
}

// The tools are listed before the call, so that the declaration (taskSupport, which decides
// whether a 2025-11-25 call asks for a task) is known when the call goes out; ext-tasks would
// otherwise list them in the background and could lose that race.
const listed = new Map((await client.listTools()).tools.map((t) => [t.name, toolDeclarationFromMcpTool(t)]));
const tools = { currentTool: (name) => listed.get(name) };
const session = createTaskSessionFromClient(client, {
  endpointId: "mcptask-proxy-test",
  tools,
  ...(era === "modern"
    ? { rawDispatch, v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} } }
    : {}),
});
try {
  const execution = await session.callTool(opts.tool, JSON.parse(opts.args ?? "{}"), { task: { preference: "prefer" } });
  if (execution.kind === "task") out({ event: "created", taskId: execution.handle.taskId });
  const { outcome } = await execution.settle({
    onEvent: (ev) => {
      if (ev.type === "task") out({ event: "task", taskId: ev.task.taskId, status: ev.task.status, statusMessage: ev.task.statusMessage });
    },
  });
  const cause = outcome.error?.cause?.cause?.issues ?? outcome.error?.cause?.issues;
  out({ event: "outcome", status: outcome.status, result: outcome.result, error: outcome.error?.message, ...(cause ? { cause } : {}) });
} finally {
  await session.close();
  await client.close();
}
