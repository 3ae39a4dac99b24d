import { defineVM } from '@cornice/sdk';
import { TimestampVM } from './vm.js';

export { TimestampVM, MAX_CLOCK_SKEW_SECONDS, type TimestampVMOptions } from './vm.js';
export { TimestampBlock, type BlockStatus } from './block.js';
export { BLOCK_LENGTH, DATA_LENGTH, blockIdOf, decodeBlock, encodeBlock, genesisFields, type BlockFields } from './codec.js';
export { TimestampError, type TimestampErrorCode } from './errors.js';
export { DEFAULT_MEMPOOL_CAPACITY } from './mempool.js';
export { DEFAULT_FREE_TXS_PER_MINUTE, parseTimestampConfig, type TimestampChainConfig } from './limits.js';
export { timestampApi, type BlockReply } from './api.js';
export { timestampService, type TimestampBackend } from './service.js';

/** The plugin: `cornice --vms @cornice/timestamp`. vmID = `timestamp` zero-padded to 32 bytes. */
export const vmFactory = defineVM({ name: 'timestamp', version: '0.1.0', create: () => new TimestampVM() });
