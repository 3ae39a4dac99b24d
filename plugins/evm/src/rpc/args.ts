/**
 * Object arguments: transaction/call objects, state overrides and log filter criteria, parsed into
 * the backend's types. Errors name the field ("invalid argument 0: gas: hex number > 64 bits").
 */
import { EvmRpcError, type AccessListEntry, type Address, type CallRequest, type Hash, type LogFilter, type LogView, type StateOverrides } from '../evm-backend.js';
import { bytesEqual } from '@cornice/sdk';
import {
  ArgumentError,
  field,
  hexData,
  kindOf,
  parseAddress,
  parseBlockNumber,
  parseData,
  parseHash,
  parseQuantity,
  parseUint64,
  type BlockTag,
} from './hex.js';

type Obj = Record<string, unknown>;

function objectOf(v: unknown, what: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into ${what}`);
  return v as Obj;
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

const MAX_ACCESS_LIST = 10_000;

function parseAccessList(v: unknown): AccessListEntry[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into access list`);
  if (v.length > MAX_ACCESS_LIST) throw new ArgumentError(`access list longer than ${MAX_ACCESS_LIST} entries`);
  return v.map((entry, i) => {
    const o = field(`[${i}]`, entry, (x) => objectOf(x, 'access list entry'));
    const keys = o.storageKeys ?? [];
    if (!Array.isArray(keys)) throw new ArgumentError(`[${i}].storageKeys: cannot unmarshal ${kindOf(keys)} into array`);
    return {
      address: field(`[${i}].address`, o.address, parseAddress),
      storageKeys: keys.map((k, j) => field(`[${i}].storageKeys[${j}]`, k, parseHash)),
    };
  });
}

/** geth's TransactionArgs for eth_call, eth_estimateGas, eth_sendTransaction. */
export function parseCallRequest(v: unknown): CallRequest {
  const o = objectOf(v, 'transaction object');
  const req: {
    -readonly [K in keyof CallRequest]: CallRequest[K];
  } = {};
  if (present(o.from)) req.from = field('from', o.from, parseAddress);
  if (present(o.to)) req.to = field('to', o.to, parseAddress);
  if (present(o.gas)) req.gas = field('gas', o.gas, parseUint64);
  if (present(o.gasPrice)) req.gasPrice = field('gasPrice', o.gasPrice, parseQuantity);
  if (present(o.maxFeePerGas)) req.maxFeePerGas = field('maxFeePerGas', o.maxFeePerGas, parseQuantity);
  if (present(o.maxPriorityFeePerGas)) req.maxPriorityFeePerGas = field('maxPriorityFeePerGas', o.maxPriorityFeePerGas, parseQuantity);
  if (req.gasPrice !== undefined && (req.maxFeePerGas !== undefined || req.maxPriorityFeePerGas !== undefined)) {
    throw new ArgumentError('both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
  }
  if (present(o.value)) req.value = field('value', o.value, parseQuantity);
  if (present(o.nonce)) req.nonce = field('nonce', o.nonce, parseUint64);
  const input = present(o.input) ? field('input', o.input, parseData) : undefined;
  const data = present(o.data) ? field('data', o.data, parseData) : undefined;
  if (input && data && !bytesEqual(input, data)) {
    throw new ArgumentError('both "data" and "input" are set and not equal. Please use "input" to pass transaction call data');
  }
  if (input ?? data) req.data = input ?? data;
  if (present(o.accessList)) req.accessList = field('accessList', o.accessList, parseAccessList);
  return req;
}

const MAX_OVERRIDES = 1_000;
const MAX_SLOTS = 10_000;

function parseSlots(v: unknown): Map<string, Hash> {
  const o = objectOf(v, 'storage map');
  const out = new Map<string, Hash>();
  for (const key of Object.keys(o)) {
    if (out.size >= MAX_SLOTS) throw new ArgumentError(`more than ${MAX_SLOTS} storage slots`);
    out.set(hexData(field(key, key, parseHash)), field(key, o[key], parseHash));
  }
  return out;
}

/** geth's StateOverride: `{address: {balance, nonce, code, state | stateDiff}}`. */
export function parseStateOverrides(v: unknown): StateOverrides {
  const o = objectOf(v, 'state override set');
  const out = new Map<string, NonNullable<ReturnType<StateOverrides['get']>>>();
  for (const key of Object.keys(o)) {
    if (out.size >= MAX_OVERRIDES) throw new ArgumentError(`more than ${MAX_OVERRIDES} accounts overridden`);
    const address = hexData(field(key, key, parseAddress));
    const acct = field(key, o[key], (x) => objectOf(x, 'account override'));
    if (present(acct.state) && present(acct.stateDiff)) throw new ArgumentError(`account ${address} has both 'state' and 'stateDiff'`);
    out.set(address, {
      ...(present(acct.balance) && { balance: field(`${key}.balance`, acct.balance, parseQuantity) }),
      ...(present(acct.nonce) && { nonce: field(`${key}.nonce`, acct.nonce, parseUint64) }),
      ...(present(acct.code) && { code: field(`${key}.code`, acct.code, parseData) }),
      ...(present(acct.state) && { state: field(`${key}.state`, acct.state, parseSlots) }),
      ...(present(acct.stateDiff) && { stateDiff: field(`${key}.stateDiff`, acct.stateDiff, parseSlots) }),
    });
  }
  return out;
}

/** Log filter criteria as sent: tags unresolved (the range is resolved at query time). */
export interface FilterCriteria {
  readonly blockHash?: Hash;
  readonly fromBlock?: BlockTag;
  readonly toBlock?: BlockTag;
  readonly addresses: readonly Address[];
  readonly topics: readonly (readonly Hash[] | null)[];
}

const MAX_TOPICS = 4;
const MAX_ADDRESSES = 1_000;
const MAX_TOPIC_ALTERNATIVES = 1_000;

function parseAddresses(v: unknown): Address[] {
  if (typeof v === 'string') return [parseAddress(v)];
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into address or address list`);
  if (v.length > MAX_ADDRESSES) throw new ArgumentError('exceed max addresses');
  return v.map((a, i) => field(`[${i}]`, a, parseAddress));
}

function parseTopics(v: unknown): (Hash[] | null)[] {
  if (!Array.isArray(v)) throw new ArgumentError(`cannot unmarshal ${kindOf(v)} into topic list`);
  if (v.length > MAX_TOPICS) throw new ArgumentError('exceed max topics');
  return v.map((t, i) => {
    if (t === null) return null;
    if (typeof t === 'string') return [field(`[${i}]`, t, parseHash)];
    if (!Array.isArray(t)) throw new ArgumentError(`[${i}]: cannot unmarshal ${kindOf(t)} into topic`);
    if (t.length > MAX_TOPIC_ALTERNATIVES) throw new ArgumentError(`[${i}]: more than ${MAX_TOPIC_ALTERNATIVES} topics in one position`);
    // An empty or null-holding alternative list matches anything, as geth.
    if (t.length === 0 || t.includes(null)) return null;
    return t.map((h, j) => field(`[${i}][${j}]`, h, parseHash));
  });
}

/** geth's FilterCriteria (eth_getLogs, eth_newFilter, the logs subscription). */
export function parseFilterCriteria(v: unknown): FilterCriteria {
  const o = objectOf(v, 'filter criteria');
  const crit: { -readonly [K in keyof FilterCriteria]: FilterCriteria[K] } = { addresses: [], topics: [] };
  if (present(o.blockHash)) {
    if (present(o.fromBlock) || present(o.toBlock)) throw new ArgumentError('cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    crit.blockHash = field('blockHash', o.blockHash, parseHash);
  }
  if (present(o.fromBlock)) crit.fromBlock = field('fromBlock', o.fromBlock, parseBlockNumber);
  if (present(o.toBlock)) crit.toBlock = field('toBlock', o.toBlock, parseBlockNumber);
  if (present(o.address)) crit.addresses = field('address', o.address, parseAddresses);
  if (present(o.topics)) crit.topics = field('topics', o.topics, parseTopics);
  return crit;
}

/** A tag as a block number at head `head` (every tag but earliest is the last accepted block). */
export function tagNumber(tag: BlockTag | undefined, head: bigint): bigint {
  if (tag === undefined) return head;
  if (typeof tag === 'bigint') return tag;
  return tag === 'earliest' ? 0n : head;
}

/**
 * The backend filter for a query at head `head`, or undefined when the range is empty (e.g. it
 * starts above the head). The end is clamped to the head: geth returns what exists.
 */
export function resolveFilter(crit: FilterCriteria, head: bigint): LogFilter | undefined {
  if (crit.blockHash) return { blockHash: crit.blockHash, addresses: crit.addresses, topics: crit.topics };
  if (typeof crit.fromBlock === 'bigint' && typeof crit.toBlock === 'bigint' && crit.fromBlock > crit.toBlock) {
    throw new EvmRpcError(-32000, 'invalid block range params');
  }
  const fromBlock = tagNumber(crit.fromBlock, head);
  let toBlock = tagNumber(crit.toBlock, head);
  if (toBlock > head) toBlock = head;
  if (fromBlock > toBlock) return undefined;
  return { fromBlock, toBlock, addresses: crit.addresses, topics: crit.topics };
}

/** True when `log` matches the addresses, topics and (numeric) block bounds of `crit`. */
export function logMatches(log: LogView, crit: FilterCriteria): boolean {
  if (crit.blockHash && !bytesEqual(crit.blockHash, log.blockHash)) return false;
  if (typeof crit.fromBlock === 'bigint' && log.blockNumber < crit.fromBlock) return false;
  if (typeof crit.toBlock === 'bigint' && log.blockNumber > crit.toBlock) return false;
  if (crit.addresses.length > 0 && !crit.addresses.some((a) => bytesEqual(a, log.address))) return false;
  const topics = crit.topics;
  if (topics.length > log.topics.length) return false;
  for (let i = 0; i < topics.length; i++) {
    const want = topics[i];
    if (want === null || want === undefined) continue;
    const have = log.topics[i]!;
    if (!want.some((t) => bytesEqual(t, have))) return false;
  }
  return true;
}
