export * from './backend.js';
export { vmFactory, defineEvmVM } from './factory.js';
export { EvmVM, EVM_VM_VERSION, type EvmVMOptions } from './vm.js';
export { EvmBlock, type BlockStatus } from './block.js';
export { EvmChainError, type EvmChainErrorCode } from './errors.js';
export { EvmChain, type EvmChainOptions } from './chain/chain.js';
export { ChainBackend, revertError, decodeRevertReason } from './chain/backend.js';
export { dynamicFeeRules, C_CHAIN_MIN_BASE_FEE, BLACKHOLE_ADDRESS, type FeeRules, type ParentFeeInfo, type DynamicFeeOptions } from './chain/fees.js';
export { parseGenesis, type EvmGenesis, type GenesisAccount } from './chain/genesis.js';
export type { CustomPrecompiles } from './chain/executor.js';
export type { MempoolOptions } from './chain/mempool.js';
export { chainCrypto, secpBackendName, keccakBackendName, keccak256 } from './chain/crypto.js';
export * from './rpc/index.js';
export { revertReason } from './rpc/eth.js';
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
