/**
 * personal_ methods and the eth_ methods that sign with node-held accounts (eth_sendTransaction and
 * eth_sign use unlocked accounts; personal_sendTransaction and personal_sign take the password).
 * Decrypted keys are wiped once used.
 */
import type { CallRequest, EvmBackend } from '../backend.js';
import { EvmRpcError, type Address } from '../backend.js';
import type { AccountStore } from './accounts.js';
import { parseCallRequest } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { ArgumentError, hexData, parseAddress, parseData, parseString, parseUint64 } from './hex.js';
import { recoverPersonal, signPersonal } from './keys.js';

const MAX_PASSWORD = 4_096;
const parsePassword = (v: unknown): string => parseString(v, MAX_PASSWORD);

/** A raw private key: 64 hex digits, with or without 0x (geth takes it without). */
function parseRawKey(v: unknown): Uint8Array {
  if (typeof v !== 'string') throw new ArgumentError('cannot unmarshal non-string into private key');
  const digits = v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v;
  if (digits.length !== 64) throw new ArgumentError(`private key must be 64 hex digits, got ${Math.min(digits.length, 1000)}`);
  return parseData('0x' + digits);
}

function parseSendRequest(v: unknown): CallRequest & { readonly from: Address } {
  const req = parseCallRequest(v);
  if (req.from === undefined) throw new ArgumentError('from: missing value (the sending account)');
  return req as CallRequest & { readonly from: Address };
}

/** With `key` (a decrypted private key), then wipes it. */
async function withKey<T>(key: Uint8Array, use: (key: Uint8Array) => Promise<T> | T): Promise<T> {
  try {
    return await use(key);
  } finally {
    key.fill(0);
  }
}

export function personalMethods(backend: EvmBackend, accounts: AccountStore, maxUnlockSeconds: number): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => void m.set(name, { args, run });

  /** Seconds as geth takes them (a JSON number: web3.js and geth's console send 300), or a hex quantity. */
  const parseDuration = (v: unknown): number => {
    if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new ArgumentError('unlock duration must be a whole number of seconds');
    const s = typeof v === 'number' ? BigInt(v) : parseUint64(v);
    if (s < 1n || s > BigInt(maxUnlockSeconds)) throw new ArgumentError(`unlock duration must be between 1 and ${maxUnlockSeconds} seconds`);
    return Number(s);
  };

  /** The unlocked key of `from`, or geth's errors. */
  const unlocked = async (from: Address): Promise<Uint8Array> => {
    const key = accounts.unlockedKey(from);
    if (key) return key;
    if (!(await accounts.has(from))) throw new EvmRpcError(-32000, 'unknown account');
    throw new EvmRpcError(-32000, 'authentication needed: password or unlock');
  };

  def('personal_listAccounts', [], async () => (await accounts.list()).map(hexData));
  def('personal_newAccount', [required(parsePassword)], async (a) => hexData(await accounts.create(a[0] as string)));
  def('personal_importRawKey', [required(parseRawKey), required(parsePassword)], async (a) =>
    withKey(a[0] as Uint8Array, async (key) => hexData(await accounts.import(key, a[1] as string))),
  );
  def('personal_unlockAccount', [required(parseAddress), required(parsePassword), optional(parseDuration)], async (a) => {
    await accounts.unlock(a[0] as Address, a[1] as string, a[2] as number | undefined);
    return true;
  });
  def('personal_lockAccount', [required(parseAddress)], async (a) => {
    accounts.lock(a[0] as Address);
    return accounts.has(a[0] as Address);
  });
  def('personal_sendTransaction', [required(parseSendRequest), required(parsePassword)], async (a) => {
    const req = a[0] as CallRequest & { readonly from: Address };
    const key = await accounts.decrypt(req.from, a[1] as string);
    return withKey(key, async (k) => hexData(await backend.sendTransaction(req, k)));
  });
  def('personal_sign', [required(parseData), required(parseAddress), required(parsePassword)], async (a) => {
    const key = await accounts.decrypt(a[1] as Address, a[2] as string);
    return withKey(key, (k) => hexData(signPersonal(a[0] as Uint8Array, k)));
  });
  def('personal_ecRecover', [required(parseData), required(parseData)], (a) => hexData(recoverPersonal(a[0] as Uint8Array, a[1] as Uint8Array)));

  def('eth_sendTransaction', [required(parseSendRequest)], async (a) => {
    const req = a[0] as CallRequest & { readonly from: Address };
    return withKey(await unlocked(req.from), async (k) => hexData(await backend.sendTransaction(req, k)));
  });
  def('eth_sign', [required(parseAddress), required(parseData)], async (a) =>
    withKey(await unlocked(a[0] as Address), (k) => hexData(signPersonal(a[1] as Uint8Array, k))),
  );
  return m;
}
