/**
 * `@cornice/sdk/components`: the wire components of the asset family that more than one chain
 * reads — secp256k1fx values, transferable outputs and inputs, UTXOs, the AVM genesis — kept once so
 * the platform chain (in the node) and the asset VM (a plugin) cannot drift apart. See the README,
 * "Shared wire components".
 */
export * from './secp256k1fx.js';
export * from './avax.js';
export * from './avm-genesis.js';
