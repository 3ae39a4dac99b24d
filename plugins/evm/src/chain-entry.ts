/**
 * @cornice/evm/chain — the EVM's execution side for extensions and tests: the ChainVM, its blocks,
 * the chain, the EvmBackend implementation and the crypto it plugs into @ethereumjs. Importing this
 * loads @ethereumjs (slow to import); the package root does not (test: light-root.test.ts).
 */
export { EvmVM } from './vm.js';
export { EvmBlock } from './block.js';
export { EvmChain } from './chain/chain.js';
export { ChainBackend, revertError, decodeRevertReason } from './chain/chain-backend.js';
export { chainCrypto, secpBackendName, keccakBackendName, keccak256 } from './chain/crypto.js';
