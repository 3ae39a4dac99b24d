export * from './backend.js';
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
