/**
 * @cornice/core/testing — the test kit for VM authors (a dev dependency; a VM's src never imports
 * core): run one VM alone on a real one-node chain, check the ChainVM contract, sweep its RPC
 * services with malformed calls; the deterministic consensus simulation (a network of Snowman engines
 * on virtual time, with adversaries) and its TestVM.
 */
export { runVM, HarnessTimeout, HarnessError, type RunVMOptions, type VMHarness } from './harness.js';
export { postJson, postRpc, type RpcReply } from './rpc.js';
export { chainVMCompliance, ComplianceError, type ComplianceCheck, type ComplianceOptions } from './compliance.js';
export { testChainContext, unclosable } from './context.js';
export { serveServices, type ServedServices, type ServeOptions } from './serve.js';
export { sweepCases, rpcSweep, maxSizeCases, maxSizeSweep, largestValue, pollHealth, sweepEndKey, type SweepCase, type MaxSizeSweepReport } from './sweep.js';
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
  type AdversaryStrategy,
  SIM_TIMEOUTS,
  SIM_BENCHLIST,
  type SimulationOptions,
  type SimulationResult,
  type MessageCounts,
  type ThroughputResult,
  type TestBlockFields,
  type TestBlockStatus,
  type TestVMOptions,
} from './simulation.js';
export type { AcceptedBlock } from '../chains/manager.js';
/** Shared memory over a store, as a node gives each chain (for tests of atomic import/export between VMs). */
export { sharedMemoryFor } from '../chains/shared-memory.js';
