/**
 * A typed client for rpc-agent: spawn the server, call its methods, listen to its events.
 *
 *     const client = RpcAgentClient.spawn({ args: ["--provider", "faux"] });
 *     await client.initialize();
 *     client.onEvent("message_update", (e) => process.stdout.write(e.assistantMessageEvent.delta ?? ""));
 *     await client.prompt("hello");
 *     await client.close();
 *
 * Framing is strict: one JSON value per LF-terminated line, split on the byte 0x0A only (never with
 * node:readline, which also splits on U+2028/U+2029). When the server exits, every pending call
 * is rejected with a ServerExitedError naming the exit code and the tail of the server's stderr.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import type {
  AbortResult,
  AgentEvent,
  ApprovalRequestParams,
  ApprovalResult,
  ClientTool,
  ElicitationRequestParams,
  ElicitationResult,
  EntryIdResult,
  SetClientToolsResult,
  ToolCallResult,
  AgentEventOfType,
  AgentEventType,
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
  MessageUpdateEvent,
  MethodName,
  Methods,
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

/** The params of a method. */
export type ParamsOf<M extends MethodName> = Methods[M]["params"];
/** The result of a method. */
export type ResultOf<M extends MethodName> = Methods[M]["result"];
/** The arguments `call` takes after the method name: none, optional params or required params. */
export type CallArgs<M extends MethodName> = [ParamsOf<M>] extends [undefined]
  ? []
  : {} extends ParamsOf<M>
    ? [params?: ParamsOf<M>]
    : [params: ParamsOf<M>];

/** The server answered a call with a JSON-RPC error. `code` is one of `ErrorCodes`. */
export class RpcError extends Error {
  readonly method: string;
  readonly code: number;
  readonly data: unknown;
  /** The server's message, without the method name and code this error's `message` adds. */
  readonly rpcMessage: string;

  constructor(method: string, code: number, message: string, data?: unknown) {
    super(`${method}: ${message} (code ${code})`);
    this.name = "RpcError";
    this.method = method;
    this.code = code;
    this.rpcMessage = message;
    this.data = data;
  }
}

/** The server process ended (or never started) while a call was waiting for its answer. */
export class ServerExitedError extends Error {
  readonly method: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderrTail: string;

  constructor(
    method: string,
    reason: string,
    exitCode: number | null,
    signal: NodeJS.Signals | null,
    stderrTail: string,
  ) {
    const tail = stderrTail.trim();
    super(`${method}: ${reason}${tail ? `; stderr ends with:\n${tail}` : " (stderr was empty)"}`);
    this.name = "ServerExitedError";
    this.method = method;
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderrTail = stderrTail;
  }
}

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

/** Listener signatures of the client's emitter. */
export interface ClientEvents {
  /** A server notification (JSON-RPC method "event"). */
  event: (event: AgentEvent) => void;
  /** The server process ended (stdout closed and the process exited). */
  exit: (code: number | null, signal: NodeJS.Signals | null) => void;
  /** A line on stdout that is not a JSON-RPC 2.0 message (there should be none). */
  protocolError: (line: string, error?: unknown) => void;
  /** A chunk of the server's stderr (its logs). */
  stderr: (text: string) => void;
  /** A response that answered no pending call (e.g. a parse error, whose id is null). */
  unmatched: (message: Record<string, unknown>) => void;
}

type JsonObject = Record<string, unknown>;

/** Answers one server-to-client request; `signal` aborts when the server sends $/cancelRequest. */
export type RequestHandler = (params: JsonObject, signal: AbortSignal) => unknown;
/** An approval callback: a decision, or `{decision, message}`. */
export type ApprovalCallback = (
  request: ApprovalRequestParams,
  signal: AbortSignal,
) => ApprovalResult | ApprovalResult["decision"] | Promise<ApprovalResult | ApprovalResult["decision"]>;
/** An elicitation callback (an MCP server asks the user): `{action, content?}`, or an action. */
export type ElicitationCallback = (
  request: ElicitationRequestParams,
  signal: AbortSignal,
) => ElicitationResult | ElicitationResult["action"] | Promise<ElicitationResult | ElicitationResult["action"]>;
/** A client tool: returns text, content blocks, or a full `{content, isError?, details?}`. */
export type ToolFunction = (
  args: JsonObject,
  signal: AbortSignal,
) => string | ToolCallResult["content"] | ToolCallResult | Promise<string | ToolCallResult["content"] | ToolCallResult>;

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

const LF = 0x0a;

/** `get_state` → `getState`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

export class RpcAgentClient {
  /** The server process. */
  readonly process: ChildProcess;
  /** Every event received so far, in order (handy in tests). */
  readonly eventsSeen: AgentEvent[] = [];

  private readonly emitter = new EventEmitter();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private chunks: Buffer[] = [];
  private stderrTail = "";
  private readonly stderrTailChars: number;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null; reason: string } | null =
    null;
  private readonly exited: Promise<number | null>;
  private stdinEnded = false;
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly tools = new Map<string, { spec: ClientTool; fn: ToolFunction }>();
  private readonly answering = new Map<unknown, AbortController>();
  /** Ids of server requests the server gave up on ($/cancelRequest); their handlers were aborted. */
  readonly cancelledRequests: unknown[] = [];

  private constructor(child: ChildProcess, stderrTailChars: number) {
    this.process = child;
    this.stderrTailChars = stderrTailChars;
    // Listeners that throw must not break the read loop; an "error" event must not crash.
    this.emitter.on("error", () => {});
    let resolveExited!: (code: number | null) => void;
    this.exited = new Promise((resolve) => (resolveExited = resolve));

    child.stdout!.on("data", (chunk: Buffer) => this.onStdout(chunk));
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      this.stderrTail = (this.stderrTail + text).slice(-this.stderrTailChars);
      this.emit("stderr", text);
    });
    // Writing to a server that has gone away raises EPIPE here; the exit handler reports it.
    child.stdin!.on("error", () => {});

    let spawnError: Error | null = null;
    child.on("error", (error) => {
      spawnError = error;
      // A process that never started emits no "close" after "error" in some Node versions.
      if (child.pid === undefined) finish(null, null);
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (this.exitInfo) return;
      this.flushTrailing();
      let reason: string;
      if (spawnError && child.pid === undefined) {
        reason = `could not start the rpc-agent server (${spawnError.message})`;
      } else if (signal) {
        reason = `the rpc-agent server was killed by ${signal} before answering`;
      } else {
        reason = `the rpc-agent server exited with code ${code} before answering`;
      }
      this.exitInfo = { code, signal, reason };
      const pending = [...this.pending.values()];
      this.pending.clear();
      for (const call of pending) {
        call.reject(new ServerExitedError(call.method, reason, code, signal, this.stderrTail));
      }
      this.emit("exit", code, signal);
      resolveExited(code);
    };
    // "close" comes after stdout has ended, so every answer written before the exit is dispatched.
    child.on("close", (code, signal) => finish(code, signal));
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

  // --- lifetime ---------------------------------------------------------------------------

  /** True once the server process has ended. */
  get isClosed(): boolean {
    return this.exitInfo !== null;
  }

  /** The last characters the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** Resolves with the exit code (null when killed by a signal) once the server has ended. */
  waitForExit(): Promise<number | null> {
    return this.exited;
  }

  /**
   * End the server's stdin and wait for it to exit. The server takes EOF as the host going
   * away: it aborts whatever is running (the turn is stored as aborted), flushes the session
   * and exits. A server still running after `timeoutMs` gets SIGTERM (the same abort), and
   * SIGKILL `graceMs` after that. Resolves with the exit code.
   */
  async close(timeoutMs = 10_000, graceMs = 3_000): Promise<number | null> {
    if (!this.stdinEnded) {
      this.stdinEnded = true;
      this.process.stdin?.end();
    }
    if (this.exitInfo) return this.exitInfo.code;
    if ((await this.exitWithin(timeoutMs)) !== "timeout") return await this.exited;
    this.process.kill("SIGTERM");
    if ((await this.exitWithin(graceMs)) !== "timeout") return await this.exited;
    this.process.kill("SIGKILL");
    return await this.exited;
  }

  private async exitWithin(ms: number): Promise<number | null | "timeout"> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms);
    });
    try {
      return await Promise.race([this.exited, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Send a signal to the server (default SIGTERM); pending calls are rejected once it exits. */
  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    return this.process.kill(signal);
  }

  // --- framing ----------------------------------------------------------------------------

  private onStdout(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(LF, start);
    while (newline >= 0) {
      const piece = chunk.subarray(start, newline);
      const line = this.chunks.length > 0 ? Buffer.concat([...this.chunks, piece]) : piece;
      this.chunks = [];
      this.onLine(line);
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.chunks.push(chunk.subarray(start));
  }

  private flushTrailing(): void {
    if (this.chunks.length === 0) return;
    const rest = Buffer.concat(this.chunks);
    this.chunks = [];
    if (rest.toString("utf8").trim()) this.emit("protocolError", rest.toString("utf8"));
  }

  private onLine(bytes: Buffer): void {
    const text = bytes.toString("utf8");
    if (!text.trim()) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      // One bad line must not stop the client.
      this.emit("protocolError", text, error);
      return;
    }
    this.dispatch(message, text);
  }

  private dispatch(message: unknown, line: string): void {
    if (Array.isArray(message)) {
      for (const item of message) this.dispatch(item, line);
      return;
    }
    if (message === null || typeof message !== "object" || (message as JsonObject).jsonrpc !== "2.0") {
      this.emit("protocolError", line);
      return;
    }
    const msg = message as JsonObject;
    if (typeof msg.method === "string" && "id" in msg) {
      this.answerServerRequest(msg);
      return;
    }
    if (msg.method === "$/cancelRequest") {
      const id = (msg.params as JsonObject | undefined)?.id;
      this.cancelledRequests.push(id);
      this.answering.get(id)?.abort();
      this.answering.delete(id);
      return;
    }
    if (typeof msg.method === "string" && !("id" in msg)) {
      const params = msg.params;
      if (msg.method === "event" && params !== null && typeof params === "object" && !Array.isArray(params)) {
        const event = params as AgentEvent;
        this.eventsSeen.push(event);
        this.emit("event", event);
      }
      return;
    }
    const id = msg.id;
    const call = typeof id === "number" ? this.pending.get(id) : undefined;
    if (call === undefined || typeof id !== "number") {
      this.emit("unmatched", msg);
      return;
    }
    this.pending.delete(id);
    if ("error" in msg) {
      const error = (msg.error ?? {}) as JsonObject;
      call.reject(
        new RpcError(
          call.method,
          typeof error.code === "number" ? error.code : 0,
          typeof error.message === "string" ? error.message : "",
          error.data,
        ),
      );
    } else {
      call.resolve(msg.result);
    }
  }

  // --- the host's side: approvals, hooks, client tools -------------------------------------

  /** Answer approval/request (declared by the next initialize()). */
  onApproval(callback: ApprovalCallback): this {
    this.handlers.set("approval/request", async (params, signal) => {
      const answer = await callback(params as unknown as ApprovalRequestParams, signal);
      return typeof answer === "string" ? { decision: answer } : answer;
    });
    return this;
  }

  /** Answer elicitation/request, an MCP server asking the user for input (declared by the next
   * initialize(); without it the servers' questions are declined). */
  onElicitation(callback: ElicitationCallback): this {
    this.handlers.set("elicitation/request", async (params, signal) => {
      const answer = await callback(params as unknown as ElicitationRequestParams, signal);
      return typeof answer === "string" ? { action: answer } : answer;
    });
    return this;
  }

  /** Answer `hook/<name>` with pi's result object for that hook (undefined: no change). */
  onHook(name: string, handler: RequestHandler): this {
    this.handlers.set(`hook/${name}`, async (params, signal) => (await handler(params, signal)) ?? {});
    return this;
  }

  /** Offer a function to the model as a tool; the server validates its arguments against `parameters`. */
  addTool(spec: ClientTool, fn: ToolFunction): this {
    this.tools.set(spec.name, { spec, fn });
    this.handlers.set("tool/call", (params, signal) => this.callTool(params, signal));
    return this;
  }

  /** What initialize() declares, from the registered handlers and tools. */
  capabilities(): NonNullable<InitializeParams["capabilities"]> {
    const hooks = [...this.handlers.keys()].filter((k) => k.startsWith("hook/")).map((k) => k.slice(5));
    const tools = [...this.tools.values()].map((t) => t.spec);
    return {
      approvals: this.handlers.has("approval/request"),
      hooks,
      ...(tools.length ? { tools } : {}),
      ...(this.handlers.has("elicitation/request") ? { elicitation: true } : {}),
    };
  }

  private async callTool(params: JsonObject, signal: AbortSignal): Promise<ToolCallResult> {
    const tool = this.tools.get(String(params.name));
    if (!tool) return { content: [{ type: "text", text: `unknown tool ${String(params.name)}` }], isError: true };
    try {
      const value = await tool.fn((params.arguments ?? {}) as JsonObject, signal);
      if (typeof value === "string") return { content: [{ type: "text", text: value }] };
      if (Array.isArray(value)) return { content: value };
      return value;
    } catch (error) {
      return { content: [{ type: "text", text: String(error) }], isError: true };
    }
  }

  private answerServerRequest(msg: JsonObject): void {
    const id = msg.id;
    const handler = this.handlers.get(String(msg.method));
    if (!handler) {
      this.reply({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${String(msg.method)}` } });
      return;
    }
    const controller = new AbortController();
    this.answering.set(id, controller);
    Promise.resolve()
      .then(() => handler((msg.params ?? {}) as JsonObject, controller.signal))
      .then(
        (result) => ({ jsonrpc: "2.0", id, result }),
        (error: unknown) => ({ jsonrpc: "2.0", id, error: { code: -32603, message: String(error) } }),
      )
      .then((reply) => {
        this.answering.delete(id);
        if (!controller.signal.aborted) this.reply(reply);
      });
  }

  private reply(message: JsonObject): void {
    if (this.stdinEnded || this.exitInfo) return;
    this.process.stdin!.write(JSON.stringify(message) + "\n");
  }

  /** Replace the client's tools on the server with those registered by addTool(). */
  setClientTools(): Promise<SetClientToolsResult> {
    return this.call("set_client_tools", { tools: [...this.tools.values()].map((t) => t.spec) });
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

  // --- calls ------------------------------------------------------------------------------

  /** Call a method by its protocol name; resolves with its result or rejects with RpcError. */
  call<M extends MethodName>(method: M, ...args: CallArgs<M>): Promise<ResultOf<M>> {
    return this.callRaw(method, args[0] as JsonObject | undefined) as Promise<ResultOf<M>>;
  }

  /** Call any method, typed or not (the escape hatch for methods newer than these types). */
  callRaw(method: string, params?: JsonObject | unknown[]): Promise<unknown> {
    if (this.exitInfo) {
      const { code, signal, reason } = this.exitInfo;
      return Promise.reject(new ServerExitedError(method, reason, code, signal, this.stderrTail));
    }
    if (this.stdinEnded) {
      return Promise.reject(new Error(`${method}: the client is closing; no more calls`));
    }
    const id = this.nextId++;
    const request: JsonObject = { jsonrpc: "2.0", id, method };
    if (params !== undefined) request.params = dropUndefined(params);
    // JSON.stringify never writes a raw LF (it escapes control characters), so one line per request.
    const line = JSON.stringify(request) + "\n";
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      this.process.stdin!.write(line);
    });
  }

  /** Write bytes as they are (for tests of malformed input). */
  sendRaw(data: string | Uint8Array): void {
    this.process.stdin!.write(data);
  }

  // --- events -----------------------------------------------------------------------------

  on<K extends keyof ClientEvents>(name: K, listener: ClientEvents[K]): this {
    this.emitter.on(name, listener);
    return this;
  }

  once<K extends keyof ClientEvents>(name: K, listener: ClientEvents[K]): this {
    this.emitter.once(name, listener);
    return this;
  }

  off<K extends keyof ClientEvents>(name: K, listener: ClientEvents[K]): this {
    this.emitter.off(name, listener);
    return this;
  }

  private emit<K extends keyof ClientEvents>(name: K, ...args: Parameters<ClientEvents[K]>): void {
    for (const listener of this.emitter.listeners(name)) {
      try {
        (listener as (...a: unknown[]) => void)(...args);
      } catch (error) {
        // A listener's bug must not break framing or id correlation.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /** Listen to the events of one type; returns a function that removes the listener. */
  onEvent<T extends AgentEventType>(type: T, listener: (event: AgentEventOfType<T>) => void): () => void {
    const wrapped = (event: AgentEvent) => {
      if (event.type === type) listener(event as AgentEventOfType<T>);
    };
    this.on("event", wrapped);
    return () => this.off("event", wrapped);
  }

  /** Each `text_delta` of the assistant's streamed reply; returns a function that unsubscribes. */
  onTextDelta(listener: (delta: string, event: MessageUpdateEvent) => void): () => void {
    return this.onEvent("message_update", (event) => {
      const update = event.assistantMessageEvent;
      if (update.type === "text_delta" && typeof update.delta === "string") listener(update.delta, event);
    });
  }

  /** The first event of that type seen at index >= `after` of `eventsSeen`, waiting if needed. */
  waitForEvent<T extends AgentEventType>(
    type: T,
    options: { predicate?: (event: AgentEventOfType<T>) => boolean; after?: number; timeoutMs?: number } = {},
  ): Promise<AgentEventOfType<T>> {
    const matches = (event: AgentEvent): event is AgentEventOfType<T> =>
      event.type === type && (options.predicate?.(event as AgentEventOfType<T>) ?? true);
    const seen = this.eventsSeen.slice(options.after ?? 0).find(matches);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        this.off("event", listener);
        this.off("exit", onExit);
      };
      const listener = (event: AgentEvent) => {
        if (matches(event)) {
          cleanup();
          resolve(event);
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        cleanup();
        reject(new ServerExitedError(`waitForEvent(${type})`, "the rpc-agent server exited", code, signal, this.stderrTail));
      };
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          cleanup();
          reject(new Error(`waitForEvent(${type}): no such event within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
      }
      this.on("event", listener);
      this.on("exit", onExit);
    });
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

function dropUndefined(params: JsonObject | unknown[]): JsonObject | unknown[] {
  if (Array.isArray(params)) return params;
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
}

// Compile-time check: every protocol method has a camelCase method on the client. A method added
// to protocol/schema.json (and regenerated) fails the build here until it gets one.
type MissingMethods = Exclude<CamelCase<MethodName>, keyof RpcAgentClient>;
const everyMethodCovered: [MissingMethods] extends [never] ? true : MissingMethods = true;
void everyMethodCovered;
