// Shared by the tests: spawn the real Python server (faux provider) in throwaway directories.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { RpcAgentClient } from "../src/index.js";

// Compiled to dist/test/helpers.js: the package root is two levels up.
const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The Python that has rpc_agent installed: $RPC_AGENT_PYTHON, else the repository's .venv. */
export const python = process.env.RPC_AGENT_PYTHON ?? resolve(packageRoot, "../../.venv/bin/python");

export interface Server {
  client: RpcAgentClient;
  cwd: string;
  home: string;
  /** Close the client (if still open) and remove the temporary directories. */
  dispose(): Promise<void>;
}

/** Start `python -m rpc_agent --provider faux` with a temp RPC_AGENT_HOME and a temp --cwd. */
export function startServer(options: { fauxScript?: unknown[]; args?: string[] } = {}): Server {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rpc-agent-ts-")));
  const home = join(root, "home");
  const cwd = join(root, "project");
  const args = ["--provider", "faux", "--cwd", cwd, ...(options.args ?? [])];
  mkdirSync(home);
  mkdirSync(cwd);
  if (options.fauxScript) {
    const script = join(root, "faux.json");
    writeFileSync(script, JSON.stringify(options.fauxScript));
    args.push("--faux-script", script);
  }
  const client = RpcAgentClient.spawn({
    command: [python, "-m", "rpc_agent"],
    args,
    cwd,
    env: { RPC_AGENT_HOME: home, ANTHROPIC_API_KEY: "" },
  });
  return {
    client,
    cwd,
    home,
    async dispose() {
      await client.close();
      // A server killed mid-snapshot leaves its git child writing into the checkpoint store for
      // a moment (SIGKILL reaches no child): retry while a folder is still being filled.
      rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    },
  };
}

/**
 * One server shared by the tests of the calling `describe`: started (and, unless told otherwise,
 * initialized) before its first test and disposed after its last. Call it in the describe body.
 */
export function suiteServer(options: { initialize?: boolean } = {}): Server {
  let server: Server | undefined;
  before(async () => {
    server = startServer();
    if (options.initialize ?? true) await server.client.initialize();
  });
  after(() => server?.dispose());
  const current = (): Server => {
    if (server === undefined) throw new Error("the suite's server is used before the suite started");
    return server;
  };
  return {
    get client() {
      return current().client;
    },
    get cwd() {
      return current().cwd;
    },
    get home() {
      return current().home;
    },
    dispose: () => current().dispose(),
  };
}
