export * from './model.js';
export * from './errors.js';
export * from './codec.js';
export { assetTextError } from './syntax.js';
export * from './genesis.js';
export { AssetVM, PLATFORM_CHAIN_ID, MAX_FUTURE_SECONDS, type AssetVMOptions, type TxDecision, type TxDecidedListener } from './vm.js';
export { AvmBlock, encodeBlock, decodeBlock, blockIdOf, MAX_BLOCK_TXS, MAX_BLOCK_BYTES, type BlockFields } from './block.js';
export { signatureRecoveries, type TxEffect } from './rules.js';
export { vmFactory } from './factory.js';
