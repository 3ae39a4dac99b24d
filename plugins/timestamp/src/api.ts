import { InvalidParamsError, cb58Decode, defineService, method, p, result, type Parser } from '@cornice/sdk';
import { DATA_LENGTH } from './codec.js';

/** cb58 of exactly 32 bytes; the error keeps the reference's text `data must be base 58 repr. of 32 bytes`. */
function payload(): Parser<Uint8Array> {
  const max = 64; // cb58 of 36 bytes is at most 50 characters
  const fail = (field: string, why: string): never => {
    throw new InvalidParamsError(field, `must be base 58 repr. of ${DATA_LENGTH} bytes (${why})`);
  };
  return {
    kind: 'cb58',
    optional: false,
    max,
    describe: () => `cb58 of exactly ${DATA_LENGTH} bytes`,
    parse(v, field) {
      if (typeof v !== 'string') return fail(field, `expected a cb58 string but got ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v}`);
      if (v.length > max) return fail(field, `must be at most ${max} characters (got ${v.length})`);
      let bytes: Uint8Array;
      try {
        bytes = cb58Decode(v);
      } catch (e) {
        return fail(field, (e as Error).message);
      }
      if (bytes.length !== DATA_LENGTH) return fail(field, `got ${bytes.length} bytes`);
      return bytes;
    },
  };
}

/** A block as the API shows it: IDs and data in cb58, the timestamp (unix seconds) as a decimal string. */
export interface BlockReply {
  id: string;
  data: string;
  timestamp: string;
  parentID: string;
}

/** timestamp: a chain of 32-byte payloads with their creation times. Served at /ext/bc/<chainID>. */
export const timestampApi = defineService('timestamp', {
  getBlock: method({
    params: p.object({ id: p.optional(p.id()) }),
    result: result<BlockReply>(),
    doc: 'A block by ID (accepted or still processing); the last accepted block when id is omitted',
  }),
  proposeBlock: method({
    params: p.object({ data: payload() }),
    result: result<{ Success: boolean }>(),
    doc: 'Queue a 32-byte payload for the next block',
  }),
});
