export {
  RpcAgentClient,
  type SpawnOptions,
} from "./client.js";
export { RpcError, ServerExitedError } from "./errors.js";
export {
  type ApprovalCallback,
  type ElicitationCallback,
  type RequestHandler,
  type ToolFunction,
} from "./host.js";
export { type CallArgs, type ClientEvents, type ParamsOf, type ResultOf } from "./connection.js";
export * from "./generated/protocol.js";
