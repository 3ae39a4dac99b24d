export { DEFAULT_SNOW_PARAMS, snowParamsProblem, type SnowParams } from './params.js';
export { ConsensusError, type ConsensusErrorCode } from './errors.js';
export { Snowball, Snowflake, topChoice, type SnowballParams } from './snowball/index.js';
export type { EngineTransport, ValidatorSampler, Scheduler } from './snowman/types.js';
export {
  SnowmanEngine,
  DEFAULT_ENGINE_LIMITS,
  type SnowmanEngineOptions,
  type EngineLimits,
  type EngineStats,
  type EngineState,
} from './snowman/engine.js';
export { WeightedSampler, type WeightedValidator } from './snowman/sampler.js';
export { systemScheduler } from './snowman/scheduler.js';
export { LoopbackTransport, type LoopbackTarget } from './snowman/loopback.js';
export {
  Simulation,
  runSimulation,
  runThroughputBenchmark,
  DEFAULT_ADVERSARY,
  EventQueue,
  drainMicrotasks,
  Prng,
  TestVM,
  TestBlock,
  TestVMError,
  encodeTestBlock,
  decodeTestBlock,
  TEST_GENESIS_BYTES,
  TEST_BLOCK_SIZE,
  type AdversaryBehaviour,
  type SimulationOptions,
  type SimulationResult,
  type MessageCounts,
  type ThroughputResult,
  type TestBlockFields,
  type TestBlockStatus,
  type TestVMOptions,
} from './simulation.js';
