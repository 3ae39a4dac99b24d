/**
 * @cornice/subnet-evm — the subnet-EVM plugin (vmID `subnetevm` zero-padded:
 * srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy), built on @cornice/evm's hooks.
 */
export * from './types.js';
export * from './precompiles/index.js';
