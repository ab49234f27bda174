/**
 * The host's side of the connection: the server asks the client for approvals, hook results,
 * elicitation answers and client tool calls; the callbacks registered here answer them, and
 * initialize() declares them as capabilities.
 */
import type { ChildProcess } from "node:child_process";
import type {
  ApprovalRequestParams,
  ApprovalResult,
  ClientTool,
  ElicitationRequestParams,
  ElicitationResult,
  InitializeParams,
  SetClientToolsResult,
  ToolCallResult,
} from "./generated/protocol.js";
import { Connection, type JsonObject } from "./connection.js";

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

/** Answers the server's requests with the callbacks and tools registered on the client. */
export abstract class Host extends Connection {
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly tools = new Map<string, { spec: ClientTool; fn: ToolFunction }>();
  private readonly answering = new Map<unknown, AbortController>();
  /** Ids of server requests the server gave up on ($/cancelRequest); their handlers were aborted. */
  readonly cancelledRequests: unknown[] = [];

  protected constructor(child: ChildProcess, stderrTailChars: number) {
    super(child, stderrTailChars);
  }

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

  protected answerServerRequest(msg: JsonObject): void {
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

  protected cancelServerRequest(id: unknown): void {
    this.cancelledRequests.push(id);
    this.answering.get(id)?.abort();
    this.answering.delete(id);
  }

  /** Replace the client's tools on the server with those registered by addTool(). */
  setClientTools(): Promise<SetClientToolsResult> {
    return this.call("set_client_tools", { tools: [...this.tools.values()].map((t) => t.spec) });
  }
}
