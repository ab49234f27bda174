/** The two ways a call fails: the server answered with a JSON-RPC error, or it ended before answering. */
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
