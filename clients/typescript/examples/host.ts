// The host governs the agent: an approval rule, two hooks and a tool of the editor's own.
//
//   npm run build && node dist/examples/host.js
//
// The server command comes from $RPC_AGENT_COMMAND (e.g. "rpc-agent"), else the repository's
// .venv python. Nothing is saved (--no-session).
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcAgentClient } from "../src/index.js";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const venvPython = resolve(packageRoot, "../../.venv/bin/python");
const command = process.env.RPC_AGENT_COMMAND?.split(" ").filter(Boolean) ??
  (existsSync(venvPython) ? [venvPython, "-m", "rpc_agent"] : undefined);
const projectDir = process.cwd();

const agent = RpcAgentClient.spawn({ command, args: ["--provider", "faux", "--no-session"], cwd: projectDir });
agent
  .onApproval((request) =>
    request.toolName === "bash" && String(request.arguments.command).startsWith("npm test")
      ? "allow"
      : { decision: "deny", message: "ask me in the chat first" },
  )
  .onHook("before_agent_start", () => ({ message: { customType: "editor", content: "Open file: src/app.ts" } }))
  .onHook("session_before_compact", () => ({ cancel: true })) // this editor compacts by hand
  .addTool(
    {
      name: "open_file",
      description: "Open a file in the editor.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
    (args) => `opened ${String(args.path)}`,
  );
const { client } = await agent.initialize(); // client: what the server accepted
console.log("accepted:", client);
const result = await agent.prompt("Open the main module and explain it");
console.log(result.stopReason, result.messages?.at(-1));
await agent.close();
