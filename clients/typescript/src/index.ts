export {
  RpcAgentClient,
  RpcError,
  ServerExitedError,
  type CallArgs,
  type ClientEvents,
  type ParamsOf,
  type ResultOf,
  type SpawnOptions,
} from "./client.js";
export * from "./generated/protocol.js";
