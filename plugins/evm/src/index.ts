export * from './backend.js';
export * from './rpc/index.js';
export { revertReason } from './rpc/eth.js';
