/**
 * @cornice/subnet-evm — the subnet-EVM plugin (vmID `subnetevm` zero-padded:
 * srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy), built on @cornice/evm's hooks.
 */
export * from './types.js';
// Configuration: genesis config, fee config, upgrade.json, the precompile schedule.
export * from './config/fee-config.js';
export * from './config/network-upgrades.js';
export * from './config/chain-config.js';
export * from './config/upgrades.js';
export * from './config/schedule.js';
// Dynamic fees.
export * from './fees/errors.js';
export * from './fees/window.js';
export * from './fees/extra-data.js';
export * from './fees/base-fee.js';
export * from './fees/block-gas-cost.js';
export * from './fees/header.js';
// The extra eth_ methods' arguments and results.
export * from './rpc/results.js';
// Stateful precompiles: the five built-ins, the registry for third parties' modules.
export * from './precompiles/index.js';
// The chain rules on @cornice/evm's hooks, the extra methods, and the plugin.
export * from './chain-rules.js';
export * from './rpc/methods.js';
export { vmFactory, defineSubnetEvmVM, subnetEvmOptions, checkSubnetGenesis, SUBNET_EVM_VM_NAME, SUBNET_EVM_VERSION } from './plugin.js';
