/**
 * @cornice/evm/chain — the EVM's execution side for extensions and tests: the ChainVM, its blocks,
 * the chain, the EvmBackend implementation and the crypto it plugs into @ethereumjs. Importing this
 * loads @ethereumjs (~0.6 s); the package root does not.
 */
export { EvmVM } from './vm.js';
export { EvmBlock } from './block.js';
export { EvmChain } from './chain/chain.js';
export { ChainBackend, revertError, decodeRevertReason } from './chain/chain-backend.js';
export { chainCrypto, secpBackendName, keccakBackendName, keccak256 } from './chain/crypto.js';
