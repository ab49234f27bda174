/**
 * A typed client for rpc-agent: spawn the server, call its methods, listen to its events.
 *
 *     const client = RpcAgentClient.spawn({ args: ["--provider", "faux"] });
 *     await client.initialize();
 *     client.onEvent("message_update", (e) => process.stdout.write(e.assistantMessageEvent.delta ?? ""));
 *     await client.prompt("hello");
 *     await client.close();
 *
 * The class is layered by job: connection.ts (the process, framing, ids and events), host.ts (the
 * server's requests: approvals, hooks, elicitation, client tools) and this module (spawning the
 * server, one typed method per protocol method); errors.ts holds the two errors a call rejects with.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type {
  AbortResult,
  EntryIdResult,
  BashResult,
  ClearQueueResult,
  CloneParams,
  CommandsResult,
  CompactParams,
  CompactResult,
  CycleModelResult,
  EntriesResult,
  ExportHtmlParams,
  ExportHtmlResult,
  FileChangesResult,
  ForkParams,
  ForkMessagesResult,
  ForkResult,
  ImageContent,
  InitializeParams,
  InitializeResult,
  ListSessionsParams,
  ListSessionsResult,
  SearchSessionsParams,
  SearchSessionsResult,
  DeleteSessionResult,
  SandboxRequest,
  MessagesResult,
  MethodName,
  ModelDescription,
  ModelsResult,
  NavigateTreeParams,
  RestoreFilesParams,
  RestoreFilesResult,
  NavigateTreeResult,
  Ok,
  PromptParams,
  PromptResult,
  QueueResult,
  SessionChangeResult,
  SessionStats,
  SetLabelResult,
  SetQueueModeParams,
  SetThinkingLevelParams,
  State,
  ThinkingLevelResult,
  ThinkingLevelsResult,
  TreeResult,
  GetTreeParams,
  McpServersResult,
} from "./generated/protocol.js";
import { PROTOCOL_VERSION } from "./generated/protocol.js";
import type { JsonObject } from "./connection.js";
import { Host } from "./host.js";

export interface SpawnOptions {
  /**
   * The program: a path or name (`"rpc-agent"`), or an argv prefix
   * (`["../../.venv/bin/python", "-m", "rpc_agent"]`). Default: `python3 -m rpc_agent`.
   */
  command?: string | string[];
  /** Arguments after the command, e.g. `["--provider", "faux", "--cwd", dir]`. */
  args?: string[];
  /** Working directory of the server process. */
  cwd?: string;
  /** Added to (and overriding) this process's environment. */
  env?: Record<string, string>;
  /** How many characters of the server's stderr to keep for error messages (default 4000). */
  stderrTailChars?: number;
}

/** `get_state` → `getState`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

export class RpcAgentClient extends Host {
  private constructor(child: ChildProcess, stderrTailChars: number) {
    super(child, stderrTailChars);
  }


  /** Start the server and connect to it. Call `initialize()` next. */
  static spawn(options: SpawnOptions = {}): RpcAgentClient {
    const prefix =
      options.command === undefined
        ? ["python3", "-m", "rpc_agent"]
        : typeof options.command === "string"
          ? [options.command]
          : options.command;
    if (prefix.length === 0) throw new Error("RpcAgentClient.spawn: empty command");
    const [program, ...programArgs] = prefix as [string, ...string[]];
    const child = spawn(program, [...programArgs, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, ...(options.env ?? {}) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new RpcAgentClient(child, options.stderrTailChars ?? 4000);
  }

  /** Append a custom_message (it reaches the model); triggerTurn lets the model answer it. */
  sendCustomMessage(
    customType: string,
    content: string | JsonObject[],
    options: { display?: boolean; details?: unknown; triggerTurn?: boolean } = {},
  ): Promise<EntryIdResult> {
    return this.callRaw("send_custom_message", { customType, content, ...options }) as Promise<EntryIdResult>;
  }

  /** Append a custom entry (extension state that never reaches the model). */
  appendCustomEntry(customType: string, data?: unknown): Promise<EntryIdResult> {
    return this.callRaw("append_custom_entry", { customType, data }) as Promise<EntryIdResult>;
  }

  // --- typed methods (one per protocol method) -----------------------------------------------

  /** Handshake: protocol version, server info, capabilities, method list and state. */
  initialize(params: InitializeParams = {}): Promise<InitializeResult> {
    const capabilities = this.capabilities();
    const declared =
      capabilities.approvals || (capabilities.hooks?.length ?? 0) > 0 || capabilities.tools || capabilities.elicitation;
    return this.call("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: "rpc-agent-client" },
      ...(declared ? { capabilities } : {}),
      ...params,
    });
  }

  /** The session and agent state. */
  getState(): Promise<State> {
    return this.call("get_state");
  }

  /** Finish: abort any run, flush the session file; the server exits 0 after answering. */
  shutdown(): Promise<Ok> {
    return this.call("shutdown");
  }

  /** Run the agent on a user message; resolves when the run ends (or at once when queued). */
  prompt(message: string, options: Omit<PromptParams, "message"> = {}): Promise<PromptResult> {
    return this.call("prompt", { ...options, message });
  }

  /** Queue a message delivered between turns of the current run. */
  steer(message: string, images?: ImageContent[]): Promise<QueueResult> {
    return this.call("steer", { message, images });
  }

  /** Queue a message delivered when the current run would stop. */
  followUp(message: string, images?: ImageContent[]): Promise<QueueResult> {
    return this.call("follow_up", { message, images });
  }

  /** Abort the run, compaction or summary in progress. */
  abort(): Promise<AbortResult> {
    return this.call("abort");
  }

  /** Take every queued steering and follow-up message off the queues; resolves with their texts. */
  clearQueue(): Promise<ClearQueueResult> {
    return this.call("clear_queue");
  }

  /** Stop waiting for an automatic retry. */
  abortRetry(): Promise<AbortResult> {
    return this.call("abort_retry");
  }

  /** Abort the running bash command. */
  abortBash(): Promise<AbortResult> {
    return this.call("abort_bash");
  }

  /**
   * Run a shell command; its output joins the context of the next prompt. The output streams
   * meanwhile as `bash_execution_update` events carrying this request's id.
   */
  bash(command: string, options: { excludeFromContext?: boolean } = {}): Promise<BashResult> {
    return this.call("bash", { ...options, command });
  }

  /** The context as the model sees it. */
  getMessages(): Promise<MessagesResult> {
    return this.call("get_messages");
  }

  /** Raw session entries in file order, optionally only those after an entry id. */
  getEntries(since?: string): Promise<EntriesResult> {
    return this.call("get_entries", { since });
  }

  /** Text of the last assistant message on the current branch (null when there is none). */
  async getLastAssistantText(): Promise<string | null> {
    return (await this.call("get_last_assistant_text")).text;
  }

  /** Message counts, token usage and cost of the session. */
  getSessionStats(): Promise<SessionStats> {
    return this.call("get_session_stats");
  }

  /** The tree as a flat depth-first list, children oldest first; optionally filtered, a subtree,
   * depth-limited, or only what changed since the `cursor` of an earlier result. */
  getTree(params: GetTreeParams = {}): Promise<TreeResult> {
    return this.call("get_tree", params);
  }

  /** Move the leaf to any entry, optionally summarizing the branch left behind; with
   * `restoreFiles`, the working directory becomes the target's state. */
  navigateTree(targetId: string, options: Omit<NavigateTreeParams, "targetId"> = {}): Promise<NavigateTreeResult> {
    return this.call("navigate_tree", { ...options, targetId });
  }

  /** Set or clear (null) the label of an entry. */
  setLabel(entryId: string, label: string | null): Promise<SetLabelResult> {
    return this.call("set_label", { entryId, label });
  }

  /** New session file from the path before a user message; its result holds that message's text. */
  fork(entryId: string, options: Omit<ForkParams, "entryId"> = {}): Promise<ForkResult> {
    return this.call("fork", { ...options, entryId });
  }

  /** User messages that fork can start from. */
  getForkMessages(): Promise<ForkMessagesResult> {
    return this.call("get_fork_messages");
  }

  /** New session file holding the current branch. */
  clone(options: CloneParams = {}): Promise<SessionChangeResult> {
    return this.call("clone", options);
  }

  /** Make some or all files what they were at an entry (or a checkpoint) without moving the leaf. */
  restoreFiles(params: RestoreFilesParams): Promise<RestoreFilesResult> {
    return this.call("restore_files", params);
  }

  /** The files an entry changed (against its parent's state, or `since` another entry), with diffs. */
  getFileChanges(entryId: string, since?: string): Promise<FileChangesResult> {
    return this.call("get_file_changes", { entryId, since });
  }

  /** Start a new session (optionally with a sandbox of its own for the agent's commands, and
   * `additionalDirectories` replacing the workspace roots besides the cwd). */
  newSession(
    parentSession?: string,
    sandbox?: SandboxRequest,
    options: { additionalDirectories?: string[] } = {},
  ): Promise<SessionChangeResult> {
    return this.call("new_session", { parentSession, sandbox, ...options });
  }

  /** Open another session file. */
  switchSession(sessionPath: string): Promise<SessionChangeResult> {
    return this.call("switch_session", { sessionPath });
  }

  /**
   * Sessions of this working directory (or of all, with `all: true`), most recent first; with
   * `limit`, a page, and `nextCursor` to pass as `cursor` for the next.
   */
  listSessions(options: ListSessionsParams = {}): Promise<ListSessionsResult> {
    return this.call("list_sessions", options);
  }

  /** Sessions whose messages, name or labels hold `query` (any case), newest first, a page at a time. */
  searchSessions(
    query: string,
    options: Omit<SearchSessionsParams, "query"> = {},
  ): Promise<SearchSessionsResult> {
    return this.call("search_sessions", { ...options, query });
  }

  /** Delete a session file (never the live one) and the stored images only it used. */
  deleteSession(sessionPath: string): Promise<DeleteSessionResult> {
    return this.call("delete_session", { sessionPath });
  }

  /** Name the session. */
  setSessionName(name: string): Promise<Ok> {
    return this.call("set_session_name", { name });
  }

  /** Replace old context by a summary. */
  compact(options: CompactParams = {}): Promise<CompactResult> {
    return this.call("compact", options);
  }

  /** Write the whole session tree as one self-contained HTML page; returns its path. */
  exportHtml(options: ExportHtmlParams = {}): Promise<ExportHtmlResult> {
    return this.call("export_html", options);
  }

  /** Models of the current provider. */
  getAvailableModels(): Promise<ModelsResult> {
    return this.call("get_available_models");
  }

  /** Switch model. */
  setModel(modelId: string, provider?: string): Promise<ModelDescription> {
    return this.call("set_model", { modelId, provider });
  }

  /** Switch to the next available model. */
  cycleModel(): Promise<CycleModelResult> {
    return this.call("cycle_model");
  }

  /** Set the thinking level. */
  setThinkingLevel(level: SetThinkingLevelParams["level"]): Promise<Ok> {
    return this.call("set_thinking_level", { level });
  }

  /** Switch to the next thinking level. */
  cycleThinkingLevel(): Promise<ThinkingLevelResult> {
    return this.call("cycle_thinking_level");
  }

  /** The thinking levels the current model takes (`["off"]` for a model without reasoning). */
  getAvailableThinkingLevels(): Promise<ThinkingLevelsResult> {
    return this.call("get_available_thinking_levels");
  }

  /** Commands a prompt can run as `/name` (none on this server: its features are methods). */
  getCommands(): Promise<CommandsResult> {
    return this.call("get_commands");
  }

  /** How queued steering messages are delivered. */
  setSteeringMode(mode: SetQueueModeParams["mode"]): Promise<Ok> {
    return this.call("set_steering_mode", { mode });
  }

  /** How queued follow-up messages are delivered. */
  setFollowUpMode(mode: SetQueueModeParams["mode"]): Promise<Ok> {
    return this.call("set_follow_up_mode", { mode });
  }

  /** Turn automatic compaction on or off. */
  setAutoCompaction(enabled: boolean): Promise<Ok> {
    return this.call("set_auto_compaction", { enabled });
  }

  /** The session's MCP servers: transport, status, tool count, last error. */
  mcpServers(): Promise<McpServersResult> {
    return this.call("mcp_servers");
  }

  /** Restart one MCP server (or all of them); resolves once it is ready or has failed. */
  mcpRestart(name?: string): Promise<McpServersResult> {
    return this.call("mcp_restart", { name });
  }

  /** Turn automatic retries on or off. */
  setAutoRetry(enabled: boolean): Promise<Ok> {
    return this.call("set_auto_retry", { enabled });
  }
}

// Compile-time check: every protocol method has a camelCase method on the client. A method added
// to protocol/schema.json (and regenerated) fails the build here until it gets one.
type MissingMethods = Exclude<CamelCase<MethodName>, keyof RpcAgentClient>;
const everyMethodCovered: [MissingMethods] extends [never] ? true : MissingMethods = true;
void everyMethodCovered;
