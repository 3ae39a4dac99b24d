export { DEFAULT_SNOW_PARAMS, snowParamsProblem, type SnowParams } from './params.js';
export { ConsensusError, type ConsensusErrorCode } from './errors.js';
export { Snowball, Snowflake, topChoice, type SnowballParams } from './snowball/index.js';
export type { EngineTransport, ValidatorSampler, ValidatorStatus, Reachability, Scheduler } from './snowman/types.js';
export { SnowmanEngine } from './snowman/engine.js';
export {
  DEFAULT_ENGINE_LIMITS,
  type SnowmanEngineOptions,
  type EngineLimits,
  type EngineStats,
  type EngineState,
} from './snowman/options.js';
export { canPoll, answering, describeReachability } from './snowman/polls.js';
export { Topological, type TreeNode, type OutsideTree, type PollRecord } from './snowman/topological.js';
export { AdaptiveTimeout, DEFAULT_TIMEOUTS, timeoutConfigProblem, type TimeoutConfig } from './requests/timeouts.js';
export { Benchlist, DEFAULT_BENCHLIST, type BenchlistConfig } from './requests/benchlist.js';
export { RequestSender, type RequestSenderOptions, type SenderStats } from './requests/sender.js';
export { WeightedSampler, type WeightedValidator } from './snowman/sampler.js';
export { systemScheduler } from './snowman/scheduler.js';
export { LoopbackTransport, type LoopbackTarget } from './snowman/loopback.js';
export type { Beacon, BootstrapProgress, BootstrapTarget, BootstrapTransport } from './bootstrap/types.js';
export {
  Bootstrapper,
  DEFAULT_BOOTSTRAP_LIMITS,
  exceedsHalf,
  type BootstrapperOptions,
  type BootstrapLimits,
  type BootstrapResult,
  type BootstrapStats,
} from './bootstrap/bootstrapper.js';
export {
  BootstrapServer,
  DEFAULT_SERVER_LIMITS,
  ANCESTORS_HEADER_BYTES,
  ANCESTORS_BYTES_PER_BLOCK,
  isAccepted,
  type BootstrapServerOptions,
  type BootstrapServerLimits,
  type BootstrapRequestHandler,
} from './bootstrap/server.js';
export { BootstrapProgressOutput, type BootstrapProgressOutputOptions } from './bootstrap/progress.js';
