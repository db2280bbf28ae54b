// A host built on the official TypeScript SDK v1 (@modelcontextprotocol/sdk), which speaks MCP
// 2025-11-25 with its experimental tasks, for mcptask's proxy tests. It calls one tool as a
// task with callToolStream and prints one JSON line per message of the stream on stdout:
// {"event":"connected",…}, {"event":"created","taskId":…}, {"event":"task","status":…},
// {"event":"outcome","status":…,"result":…}. A test can kill it at any point.
//
//   node proxy-host-v1.mjs (--http URL | --stdio '["cmd","arg",…]') --tool NAME [--args JSON]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const opts = {};
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const transport = opts.http
  ? new StreamableHTTPClientTransport(new URL(opts.http))
  : (() => {
      const [command, ...args] = JSON.parse(opts.stdio);
      return new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
    })();
const client = new Client({ name: "ts-sdk-v1", version: "1.32.2" }, { capabilities: {} });
await client.connect(transport);
out({ event: "connected", era: "2025-11-25", sessionId: transport.sessionId });
try {
  const stream = client.experimental.tasks.callToolStream(
    { name: opts.tool, arguments: JSON.parse(opts.args ?? "{}") },
    CallToolResultSchema,
    { task: { ttl: 600000 } },
  );
  for await (const message of stream) {
    switch (message.type) {
      case "taskCreated":
        out({ event: "created", taskId: message.task.taskId });
        break;
      case "taskStatus":
        out({ event: "task", taskId: message.task.taskId, status: message.task.status, statusMessage: message.task.statusMessage });
        break;
      case "result":
        out({ event: "outcome", status: "completed", result: message.result });
        break;
      case "error":
        out({ event: "outcome", status: "failed", error: String(message.error?.message ?? message.error) });
        break;
    }
  }
} finally {
  await client.close();
}
