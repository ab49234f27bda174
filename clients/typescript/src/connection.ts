/**
 * The connection to one rpc-agent process: its lifetime, the framing of stdout into JSON-RPC
 * messages, request ids matched to answers, and the events the server sends.
 *
 * Framing is strict: one JSON value per LF-terminated line, split on the byte 0x0A only (never with
 * node:readline, which also splits on U+2028/U+2029). When the server exits, every pending call
 * is rejected with a ServerExitedError naming the exit code and the tail of the server's stderr.
 * The server's own requests ($/cancelRequest included) are left to the subclass that answers them.
 */
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import type {
  AgentEvent,
  AgentEventOfType,
  AgentEventType,
  MessageUpdateEvent,
  MethodName,
  Methods,
} from "./generated/protocol.js";
import { RpcError, ServerExitedError } from "./errors.js";

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

export type JsonObject = Record<string, unknown>;

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

const LF = 0x0a;

/** One server process as a JSON-RPC peer; RpcAgentClient is what users construct. */
export abstract class Connection {
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

  protected constructor(child: ChildProcess, stderrTailChars: number) {
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

  /** Answer a request the server sent (it has a method and an id). */
  protected abstract answerServerRequest(msg: JsonObject): void;

  /** The server sent $/cancelRequest: it no longer waits for the answer to that request. */
  protected abstract cancelServerRequest(id: unknown): void;

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
      this.cancelServerRequest((msg.params as JsonObject | undefined)?.id);
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

  /** Answer a server request, unless the client is closing or the server has gone. */
  protected reply(message: JsonObject): void {
    if (this.stdinEnded || this.exitInfo) return;
    this.process.stdin!.write(JSON.stringify(message) + "\n");
  }
}

function dropUndefined(params: JsonObject | unknown[]): JsonObject | unknown[] {
  if (Array.isArray(params)) return params;
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
}
