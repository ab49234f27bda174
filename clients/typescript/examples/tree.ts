// Prompts the agent (offline faux provider), branches the conversation and prints the tree.
//
//   npm run build && npm run example
//
// The server command comes from $RPC_AGENT_COMMAND (e.g. "rpc-agent"), else the repository's
// .venv python, else `python3 -m rpc_agent`. Sessions go to a temporary RPC_AGENT_HOME.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcAgentClient, type TreeNode } from "../src/index.js";

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const venvPython = resolve(packageRoot, "../../.venv/bin/python");
const command = process.env.RPC_AGENT_COMMAND?.split(" ").filter(Boolean) ??
  (existsSync(venvPython) ? [venvPython, "-m", "rpc_agent"] : undefined);

const home = mkdtempSync(join(tmpdir(), "rpc-agent-example-"));
const client = RpcAgentClient.spawn({
  command,
  args: ["--provider", "faux", "--cwd", process.cwd()],
  env: { RPC_AGENT_HOME: home },
});

function printTree(nodes: TreeNode[], leafId: string | null): void {
  for (const node of nodes) {
    const marker = node.id === leafId ? "*" : " ";
    const label = node.label ? ` [${node.label}]` : "";
    const who = node.role ?? node.type;
    console.log(`${marker} ${"  ".repeat(node.depth)}${node.id} ${who}: ${node.preview}${label}`);
  }
}

try {
  const init = await client.initialize({ clientInfo: { name: "tree-example" } });
  console.log(`connected to ${init.serverInfo.name} ${init.serverInfo.version} (protocol ${init.protocolVersion})`);

  process.stdout.write("> What is a tree?\n< ");
  const stop = client.onTextDelta((delta) => process.stdout.write(delta));
  await client.prompt("What is a tree?");
  process.stdout.write("\n> And a forest?\n< ");
  await client.prompt("And a forest?");
  process.stdout.write("\n");

  // Go back to before the second question and ask something else: a second branch.
  const { nodes } = await client.getTree();
  const users = nodes.filter((node) => node.role === "user");
  const second = users[1]!;
  const nav = await client.navigateTree(second.id);
  console.log(`navigated back; the editor would get: ${JSON.stringify(nav.editorText)}`);
  await client.setLabel(users[0]!.id, "start");
  process.stdout.write("> And a bush?\n< ");
  await client.prompt("And a bush?");
  process.stdout.write("\n\n");
  stop();

  const tree = await client.getTree();
  console.log(`tree (${tree.nodes.length} entries, * = leaf):`);
  printTree(tree.nodes, tree.leafId);
} finally {
  await client.close();
  rmSync(home, { recursive: true, force: true });
}
