/**
 * @cornice/evm — light on purpose: this is what a node imports to learn the plugin (vmFactory), so
 * it holds no @ethereumjs code. The execution classes are at `@cornice/evm/chain`; types of both are
 * here.
 */
export * from './evm-backend.js';
export { EVM_VM_VERSION } from './version.js';
export type { EvmVM, EvmVMOptions } from './vm.js';
export { parseChainConfig } from './chain-config.js';
export type { EvmBlock, BlockStatus } from './block.js';
export type { EvmChain, EvmChainOptions } from './chain/chain.js';
export type { ChainBackend } from './chain/chain-backend.js';
export { vmFactory, defineEvmVM } from './factory.js';
export { EvmChainError, type EvmChainErrorCode } from './errors.js';
export { dynamicFeeRules, C_CHAIN_MIN_BASE_FEE, BLACKHOLE_ADDRESS, type FeeRules, type ParentFeeInfo, type DynamicFeeOptions } from './chain/fees.js';
export { parseGenesis, type EvmGenesis, type GenesisAccount } from './chain/genesis.js';
export type { CustomPrecompiles } from './chain/precompiles/guarded.js';
export type {
  ChainRules,
  ChainRulesFactory,
  HookState,
  ParentHeader,
  HeaderFields,
  BlockInfo,
  IncludedTx,
  PrecompileCall,
  PrecompileLog,
  PrecompileResult,
  StatefulPrecompile,
} from './chain/rules.js';
export type { MempoolOptions } from './chain/mempool.js';
export * from './rpc/index.js';
export { checksumAddress } from './checksum.js';
export { revertReason } from './revert-reason.js';
// For extension methods (options.extraMethods): argument parsing and formats with geth's texts.
export { parseArgs, required, optional, type Arg } from './rpc/dispatch.js';
export {
  ArgumentError,
  quantity,
  hexData,
  parseQuantity,
  parseUint64,
  parseData,
  parseAddress,
  parseHash,
  parseBool,
  parseString,
  parseBlockNumber,
  parseBlockRef,
  type BlockTag,
} from './rpc/hex.js';
export { blockJson, headerJson, txJson, receiptJson, logJson } from './rpc/format.js';
