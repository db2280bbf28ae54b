// A host that does not speak Tasks, built on the official TypeScript SDK v1 Client
// (@modelcontextprotocol/sdk, MCP 2025-11-25), as most hosts in use are: it lists the tools,
// then makes one plain callTool with a progress handler, and prints one JSON line per thing it
// sees on stdout: {"event":"connected"}, {"event":"tools","tools":[…]},
// {"event":"progress","progress":…,"message":…}, {"event":"elicit",…},
// {"event":"outcome","status":"completed"|"error","result":…,"error":…}.
// For mcptask's `proxy --bridge-tasks` tests (issue 22).
//
//   node bridge-host-v1.mjs (--http URL | --stdio '["cmd","arg",…]') --tool NAME [--args JSON]
//        [--timeout MS] [--reset-on-progress true] [--cancel-after MS] [--linger MS] [--elicit JSON]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const transport = opts.http
  ? new StreamableHTTPClientTransport(new URL(opts.http))
  : (() => {
      const [command, ...args] = JSON.parse(opts.stdio);
      return new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
    })();
const capabilities = opts.elicit ? { elicitation: {} } : {};
const client = new Client({ name: "ts-sdk-v1-plain", version: "1.32.2" }, { capabilities });
if (opts.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out({ event: "elicit", message: req.params.message });
    return { action: "accept", content: JSON.parse(opts.elicit) };
  });
}
await client.connect(transport);
out({ event: "connected", sessionId: transport.sessionId });
const { tools } = await client.listTools();
out({ event: "tools", tools: tools.map((t) => ({ name: t.name, taskSupport: t.execution?.taskSupport ?? null })) });
const ac = new AbortController();
if (opts["cancel-after"]) setTimeout(() => ac.abort("the user cancelled"), Number(opts["cancel-after"]));
try {
  const result = await client.callTool({ name: opts.tool, arguments: JSON.parse(opts.args ?? "{}") }, undefined, {
    onprogress: (p) => out({ event: "progress", progress: p.progress, message: p.message }),
    timeout: opts.timeout ? Number(opts.timeout) : undefined,
    resetTimeoutOnProgress: opts["reset-on-progress"] === "true",
    signal: ac.signal,
  });
  out({ event: "outcome", status: "completed", result });
} catch (e) {
  out({ event: "outcome", status: "error", error: String(e?.message ?? e), code: e?.code });
} finally {
  // A host stays up after its user cancels a call; --linger keeps this one up as long, so that
  // its notifications/cancelled is not cut off by closing the transport at once.
  if (opts.linger) await new Promise((resolve) => setTimeout(resolve, Number(opts.linger)));
  await client.close();
}
