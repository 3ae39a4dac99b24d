/**
 * platform.buildGenesis (the genesis format of genesis.ts), served statically at /ext/vm/platform: the bytes of a
 * platform genesis from JSON. No chain or VM registry stands behind a static service, so vmIDs must
 * be cb58 IDs, not aliases.
 */
import {
  Id,
  InvalidParamsError,
  bindService,
  cb58Encode,
  defineService,
  method,
  p,
  result,
  type BoundService,
  type ParamsOf,
  type Parser,
} from '@cornice/sdk';
import { txId } from './codec.js';
import { PlatformError } from './errors.js';
import { encodeGenesis, type PlatformGenesis } from './genesis.js';
import { DEFAULT_SUBNET_ID, EMPTY_SIGNATURE, NUMBER_OF_SHARES, type AddDefaultSubnetValidatorTx, type CreateChainTx } from './model.js';

/** Bounds on buildGenesis input; the genesis bytes are bounded as a whole too (256 KiB). */
export const BUILD_GENESIS_LIMITS = {
  accounts: 4096,
  validators: 1024,
  chains: 64,
  fxIds: 32,
  chainName: 128,
  /** A chain's genesis data, decoded (base58 decoding is not linear: keep it modest). */
  genesisDataBytes: 64 * 1024,
} as const;

const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** A vmID: cb58 of 32 bytes only, never an alias. */
function vmIdParam(): Parser<Id> {
  const max = 64;
  return {
    kind: 'id',
    optional: false,
    max,
    describe: () => 'vmID (cb58 of 32 bytes; VM aliases are not known to a static service)',
    parse(v, field) {
      if (typeof v !== 'string') throw new InvalidParamsError(field, `expected a cb58 vmID but got ${typeName(v)}`);
      if (v.length > max) throw new InvalidParamsError(field, `must be at most ${max} characters (got ${v.length})`);
      try {
        return Id.fromString(v);
      } catch (e) {
        throw new InvalidParamsError(field, `must be a cb58 vmID; VM aliases are not known to a static service (${(e as Error).message})`);
      }
    },
  };
}

const time = () => p.uint(53);

export const platformStaticApi = defineService('platform', {
  buildGenesis: method({
    params: p.object({
      /** The network ID: the reference's JSON key is `address` (sic). */
      address: p.optional(p.uint(32)),
      networkID: p.optional(p.uint(32)),
      accounts: p.optional(
        p.array(p.object({ address: p.shortId(), balance: p.uint64(), nonce: p.optional(p.uint64()) }), { max: BUILD_GENESIS_LIMITS.accounts }),
      ),
      defaultSubnetValidators: p.optional(
        p.array(
          p.object({
            startTime: time(),
            endTime: time(),
            weight: p.optional(p.uint64()),
            stakeAmount: p.optional(p.uint64()),
            id: p.shortId(),
            destination: p.shortId(),
            delegationFeeRate: p.optional(p.uint(32, { max: NUMBER_OF_SHARES })),
          }),
          { max: BUILD_GENESIS_LIMITS.validators },
        ),
      ),
      chains: p.optional(
        p.array(
          p.object({
            genesisData: p.optional(p.cb58({ maxBytes: BUILD_GENESIS_LIMITS.genesisDataBytes })),
            vmID: vmIdParam(),
            fxIDs: p.optional(p.array(p.id(), { max: BUILD_GENESIS_LIMITS.fxIds })),
            name: p.string({ max: BUILD_GENESIS_LIMITS.chainName }),
            subnetID: p.optional(p.id()),
          }),
          { max: BUILD_GENESIS_LIMITS.chains },
        ),
      ),
      time: time(),
    }),
    result: result<{ bytes: string }>(),
    doc: 'The bytes (cb58) of a platform genesis: accounts, Default Subnet validators, chains, time',
  }),
});

type BuildGenesisArgs = ParamsOf<typeof platformStaticApi.methods.buildGenesis>;

function networkIdOf(args: BuildGenesisArgs): number {
  const { address, networkID } = args;
  if (address !== undefined && networkID !== undefined && address !== networkID) {
    throw new InvalidParamsError('networkID', `differs from address (${address}); both name the network ID`);
  }
  const id = address ?? networkID;
  if (id === undefined) throw new InvalidParamsError('address', 'missing required field (the network ID; also accepted as networkID)');
  return id;
}

/** The genesis the arguments describe; PlatformError('InvalidGenesis') with the reference's texts. */
function genesisFromArgs(args: BuildGenesisArgs): PlatformGenesis {
  const networkId = networkIdOf(args);
  const accounts = (args.accounts ?? []).map((a, i) => {
    if (a.balance === 0n) throw new PlatformError('InvalidGenesis', 'account has no value', { field: `accounts[${i}].balance` });
    // As the reference: genesis accounts start at nonce 0 (a given nonce is ignored).
    return { address: a.address, nonce: 0n, balance: a.balance };
  });
  const validators = (args.defaultSubnetValidators ?? []).map((v, i): AddDefaultSubnetValidatorTx => {
    const field = `defaultSubnetValidators[${i}]`;
    if (v.weight !== undefined && v.stakeAmount !== undefined && v.weight !== v.stakeAmount) {
      throw new InvalidParamsError(`${field}.stakeAmount`, 'differs from weight; give one of them');
    }
    const weight = v.weight ?? v.stakeAmount ?? 0n;
    if (weight === 0n || v.endTime <= args.time) {
      throw new PlatformError('InvalidGenesis', 'validator would have already unstaked', { field });
    }
    return {
      kind: 'addDefaultSubnetValidator',
      nodeId: v.id,
      weight,
      start: v.startTime,
      end: v.endTime,
      networkId,
      nonce: 0n,
      destination: v.destination,
      shares: v.delegationFeeRate ?? 0,
      sig: EMPTY_SIGNATURE.slice(),
    };
  });
  // The current validators' heap (by end time, then ID): a sorted array is a valid heap.
  const byEnd = validators
    .map((tx) => ({ tx, key: txId(tx).key }))
    .sort((a, b) => a.tx.end - b.tx.end || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((v) => v.tx);
  const chains = (args.chains ?? []).map(
    (c): CreateChainTx => ({
      kind: 'createChain',
      networkId,
      subnetId: c.subnetID ?? DEFAULT_SUBNET_ID,
      nonce: 0n,
      chainName: c.name,
      vmId: c.vmID,
      fxIds: c.fxIDs ?? [],
      genesisData: c.genesisData ?? new Uint8Array(),
      controlSigs: [],
      payerSig: EMPTY_SIGNATURE.slice(),
    }),
  );
  return { accounts, validators: byEnd, chains, timestamp: args.time };
}

/** platform.buildGenesis, bound (the node serves it at /ext/vm/platform). */
export function platformStaticService(): BoundService {
  return bindService(platformStaticApi, {
    async buildGenesis(args) {
      return { bytes: cb58Encode(encodeGenesis(genesisFromArgs(args))) };
    },
  });
}
