export * from './model.js';
export * from './errors.js';
export * from './codec.js';
export { assetTextError } from './syntax.js';
export { avmApi, avmApiWithSymbol, nativeMethodAliases, type AssetBalanceReply, type AssetDescriptionReply, type BalanceReply, type UtxoIdReply } from './api.js';
export { avmService, MAX_SPEND_INPUTS, MAX_UTXOS_READ, type AvmServiceOptions } from './service.js';
export { ChainAddress, chainAddress, formatAddress, parseAddress, addressOn, type AddressChain } from './addresses.js';
export { UserKeys, Keychain } from './keys.js';
