import {
  MAX_WIRE_BYTES,
  defineService,
  withNativeAliases,
  method,
  p,
  result,
  type ServiceDef,
} from '@cornice/sdk';
import { MAX_CONTROL_KEYS_THRESHOLD, NUMBER_OF_SHARES } from './model.js';

/** Largest genesisData createBlockchain takes: the built tx must still fit in MAX_WIRE_BYTES. */
export const MAX_GENESIS_BYTES = 12 * 1024;
/** Longest blockchain name (characters). */
export const MAX_CHAIN_NAME = 256;
/** Most fxIDs a createBlockchain names. */
export const MAX_FX_IDS = 16;
/** Most control keys a createSubnet lists (before duplicates are dropped). */
export const MAX_CONTROL_KEYS = 256;

// The keystore refuses names and passwords over 1024 characters with its own text; this bound only
// keeps absurd inputs out (as the keystore service's).
const username = () => p.string({ max: 4096 });
const password = () => p.string({ max: 4096 });
/** Unix seconds. */
const time = () => p.uint(53);
/** The next nonce of the paying account (the reference's payerNonce; 0 is refused). */
const payerNonce = () => p.uint64();
/** A whole signed or unsigned tx in its wire form. */
const txBytes = () => p.cb58({ maxBytes: MAX_WIRE_BYTES });

/** A private key in cb58 (32 bytes); anything else gets the reference's `problem while parsing privateKey`. */
const privateKey = () => p.privateKey({ problem: 'problem while parsing privateKey' });

/** An account as the API shows it: nonce and balance as decimal strings. */
export interface AccountReply {
  address: string;
  nonce: string;
  balance: string;
}

/**
 * A staker. Default Subnet entries carry stakeAmount and address (the destination); other subnets'
 * carry weight. Integers are decimal strings.
 */
export interface ValidatorReply {
  id: string;
  startTime: string;
  endTime: string;
  stakeAmount?: string;
  address?: string;
  weight?: string;
}

export interface SubnetReply {
  id: string;
  controlKeys: string[];
  threshold: string;
}

export interface BlockchainReply {
  id: string;
  name: string;
  subnetID: string;
  vmID: string;
}

type UnsignedTxReply = { unsignedTx: string };
type TxReply = { tx: string };

const stakerFields = {
  /** Default: this node's ID. */
  id: p.optional(p.shortId()),
  startTime: time(),
  endTime: time(),
  // Either spelling; one is required (checked by the service, which names the field).
  stakeAmount: p.optional(p.uint64()),
  weight: p.optional(p.uint64()),
  payerNonce: payerNonce(),
};

const exportParams = p.object({
  /** An X-Chain address without the `X-` prefix. */
  to: p.shortId(),
  amount: p.uint64(),
  payerNonce: payerNonce(),
});
const importParams = p.object({
  username: username(),
  password: password(),
  /** The P-Chain account that receives the funds and pays; the user must hold its key. */
  to: p.shortId(),
  payerNonce: payerNonce(),
});

const exportNative = method({
  params: exportParams,
  result: result<UnsignedTxReply>(),
  doc: 'Build an unsigned tx moving native tokens from a P-Chain account to an X-Chain address (sign with the payer, then issueTx)',
});
const importNative = method({
  params: importParams,
  result: result<TxReply>(),
  doc: "Build and sign a tx moving every native-token UTXO the X-Chain exported to `to` into that account (then issueTx)",
});

/** platform: the platform chain (P-Chain). Served at /ext/P and /ext/bc/P. */
export const platformApi = defineService('platform', {
  createAccount: method({
    params: p.object({ username: username(), password: password(), privateKey: p.optional(privateKey()) }),
    result: result<{ address: string }>(),
    doc: "Store a new key (or the given privateKey) in the user's P-Chain keys; the account's address",
  }),
  getAccount: method({
    params: p.object({ address: p.shortId() }),
    result: result<AccountReply>(),
    doc: 'An account (nonce and balance 0 when it never received anything)',
  }),
  listAccounts: method({
    params: p.object({ username: username(), password: password() }),
    result: result<{ accounts: AccountReply[] }>(),
    doc: 'The accounts whose keys the user holds',
  }),
  getCurrentValidators: method({
    params: p.object({ subnetID: p.optional(p.id()) }),
    result: result<{ validators: ValidatorReply[] }>(),
    doc: 'Current stakers of a subnet (default: the Default Subnet), by end time',
  }),
  getPendingValidators: method({
    params: p.object({ subnetID: p.optional(p.id()) }),
    result: result<{ validators: ValidatorReply[] }>(),
    doc: 'Pending stakers of a subnet (default: the Default Subnet), by start time',
  }),
  sampleValidators: method({
    params: p.object({ size: p.uint(16), subnetID: p.optional(p.id()) }),
    result: result<{ validators: string[] }>(),
    doc: 'size distinct current validators of a subnet, drawn by weight; node IDs sorted',
  }),
  addDefaultSubnetValidator: method({
    params: p.object({
      ...stakerFields,
      destination: p.shortId(),
      delegationFeeRate: p.optional(p.uint(32, { max: NUMBER_OF_SHARES })),
    }),
    result: result<UnsignedTxReply>(),
    doc: 'Build an unsigned tx adding a Default Subnet validator (sign with the payer)',
  }),
  addNonDefaultSubnetValidator: method({
    params: p.object({ ...stakerFields, subnetID: p.id() }),
    result: result<UnsignedTxReply>(),
    doc: "Build an unsigned tx adding a validator to a subnet (sign with threshold control keys, then the payer)",
  }),
  addDefaultSubnetDelegator: method({
    params: p.object({ ...stakerFields, destination: p.shortId() }),
    result: result<UnsignedTxReply>(),
    doc: 'Build an unsigned tx delegating stake to a Default Subnet validator (sign with the payer)',
  }),
  createSubnet: method({
    params: p.object({
      controlKeys: p.array(p.shortId(), { max: MAX_CONTROL_KEYS }),
      threshold: p.uint(16, { min: 1, max: MAX_CONTROL_KEYS_THRESHOLD }),
      payerNonce: payerNonce(),
    }),
    result: result<UnsignedTxReply>(),
    doc: 'Build an unsigned tx creating a subnet; controlKeys are sorted and deduplicated (sign with the payer)',
  }),
  getSubnets: method({
    params: p.object({ ids: p.optional(p.array(p.id())) }),
    result: result<{ subnets: SubnetReply[] }>(),
    doc: 'The subnets (all, or those in ids); never the Default Subnet',
  }),
  validatedBy: method({
    params: p.object({ blockchainID: p.id() }),
    result: result<{ subnetID: string }>(),
    doc: 'The subnet that validates a blockchain',
  }),
  validates: method({
    params: p.object({ subnetID: p.id() }),
    result: result<{ blockchainIDs: string[] }>(),
    doc: 'The blockchains a subnet validates',
  }),
  getBlockchains: method({
    params: p.none(),
    result: result<{ blockchains: BlockchainReply[] }>(),
    doc: 'Every blockchain but the P-Chain',
  }),
  createBlockchain: method({
    params: p.object({
      // Optional to the parser so that omitting them gets the reference's texts (still -32602).
      subnetID: p.optional(p.id()),
      vmID: p.optional(p.string({ max: 256 })),
      name: p.string({ max: MAX_CHAIN_NAME }),
      payerNonce: payerNonce(),
      genesisData: p.cb58({ maxBytes: MAX_GENESIS_BYTES }),
      fxIDs: p.optional(p.array(p.id(), { max: MAX_FX_IDS })),
    }),
    result: result<UnsignedTxReply>(),
    doc: "Build an unsigned tx creating a blockchain of a loaded VM (ID or alias) on a subnet (sign with threshold control keys, then the payer)",
  }),
  getBlockchainStatus: method({
    params: p.object({ blockchainID: p.id() }),
    result: result<{ status: string }>(),
    doc: 'Validating, Created, Preferred or Unknown',
  }),
  sign: method({
    params: p.object({ tx: txBytes(), signer: p.shortId(), username: username(), password: password() }),
    result: result<TxReply>(),
    doc: "Add the signature of one of the user's keys: a free control slot of the tx's subnet first, else the payer slot",
  }),
  issueTx: method({
    params: p.object({ tx: txBytes() }),
    result: result<{ txID: string }>(),
    doc: 'Check a signed tx against the preferred state and queue it for a block',
  }),
  exportNATIVE: exportNative,
  importNATIVE: importNative,
});

/** The declaration with `exportNATIVE`/`importNATIVE` also under the native symbol (what the node serves). */
export function platformApiWithSymbol(symbol: string): ServiceDef {
  return withNativeAliases(platformApi, symbol);
}
