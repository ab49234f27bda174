export {
  RpcAgentClient,
  RpcError,
  ServerExitedError,
  type ApprovalCallback,
  type ElicitationCallback,
  type CallArgs,
  type RequestHandler,
  type ToolFunction,
  type ClientEvents,
  type ParamsOf,
  type ResultOf,
  type SpawnOptions,
} from "./client.js";
export * from "./generated/protocol.js";
