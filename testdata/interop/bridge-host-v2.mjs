// A 2026-07-28 host that does not declare the Tasks extension, built on the official
// TypeScript client v2 (@modelcontextprotocol/client) without ext-tasks: it makes one plain
// callTool and prints one JSON line per thing it sees on stdout: {"event":"connected","era":…},
// {"event":"progress",…}, {"event":"outcome","status":"completed"|"error",…}. For mcptask's
// `proxy --bridge-tasks` tests (issue 22). With --elicit JSON it declares elicitation and
// answers every question with that content through the client's multi-round-trip (MRTR)
// auto-fulfilment, printing {"event":"elicit","message":…} for each (one per round).
//
//   node bridge-host-v2.mjs (--http URL | --stdio '["cmd","arg",…]') --tool NAME [--args JSON] [--elicit JSON]
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const transport = opts.http
  ? new StreamableHTTPClientTransport(new URL(opts.http))
  : (() => {
      const [command, ...args] = JSON.parse(opts.stdio);
      return new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
    })();
const capabilities = opts.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: "ts-client-v2-plain", version: "2.4.0" }, { capabilities, versionNegotiation: { mode: "auto" } });
if (opts.elicit) {
  client.setRequestHandler("elicitation/create", async (req) => {
    out({ event: "elicit", message: req.params.message });
    return { action: "accept", content: JSON.parse(opts.elicit) };
  });
}
await client.connect(transport);
out({ event: "connected", era: client.getProtocolEra() });
try {
  const result = await client.callTool({ name: opts.tool, arguments: JSON.parse(opts.args ?? "{}") }, {
    onprogress: (p) => out({ event: "progress", progress: p.progress, message: p.message }),
    timeout: opts.timeout ? Number(opts.timeout) : undefined,
    resetTimeoutOnProgress: true,
  });
  out({ event: "outcome", status: "completed", result });
} catch (e) {
  out({ event: "outcome", status: "error", error: String(e?.message ?? e), code: e?.code });
} finally {
  await client.close();
}
