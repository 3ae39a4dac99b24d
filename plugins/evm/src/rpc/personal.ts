/**
 * personal_ methods and the eth_ methods that sign with node-held accounts (eth_sendTransaction,
 * eth_sign and eth_signTransaction use unlocked accounts; personal_sendTransaction and personal_sign take the password).
 * Decrypted keys are wiped once used.
 *
 * Off unless the operator turns them on (coreth's `eth-apis` with "internal-personal"): then every
 * one of these methods answers -32601 naming that key, and eth_accounts lists none (rpc-personal.test.ts).
 * When on:
 * - passwords must not be empty (-32602);
 * - password checks are throttled per account (accounts.ts);
 * - an unlock belongs to whoever made it. Over a WebSocket that is the connection: only it may then
 *   eth_sendTransaction / eth_sign from the account, until the duration passes or it closes. Over
 *   HTTP there is no caller to tie it to — any page or process that reaches the port could use the
 *   account — so, as geth's --allow-insecure-unlock, an HTTP unlock is refused ("account unlock with
 *   HTTP access is forbidden") unless `keystore-insecure-unlock-allowed` is set, and is then every
 *   caller's. personal_sendTransaction and personal_sign, which take the password each time, need no
 *   unlock. Tests: rpc-personal.test.ts, test/e2e/evm-personal.test.ts.
 */
import type { CallRequest, EvmBackend } from '../evm-backend.js';
import { EvmRpcError, type Address } from '../evm-backend.js';
import type { AccountStore, UnlockScope } from './accounts.js';
import { parseCallRequest } from './args.js';
import { optional, required, type MethodSpec } from './dispatch.js';
import { ArgumentError, hexData, parseAddress, parseData, parseString, parseUint64 } from './hex.js';
import { recoverPersonal, signPersonal } from './keys.js';
import { checkSignRequest, signTransaction } from './tx-methods.js';

const MAX_PASSWORD = 4_096;
const parsePassword = (v: unknown): string => {
  const s = parseString(v, MAX_PASSWORD);
  if (s.length === 0) throw new ArgumentError('password must not be empty');
  return s;
};

/** What the operator turned on (chain config; see the header). */
export interface PersonalOptions {
  /** personal_ and node-held accounts served (coreth's eth-apis with "internal-personal"); default false. */
  readonly enabled: boolean;
  /** personal_unlockAccount over HTTP allowed, for every caller (coreth's keystore-insecure-unlock-allowed); default false. */
  readonly allowInsecureUnlock: boolean;
}

/** The methods this file serves (all of them answer -32601 when off). */
export const PERSONAL_METHODS = [
  'personal_listAccounts', 'personal_newAccount', 'personal_importRawKey', 'personal_unlockAccount', 'personal_lockAccount',
  'personal_sendTransaction', 'personal_sign', 'personal_ecRecover', 'eth_sendTransaction', 'eth_sign', 'eth_signTransaction',
] as const;

/** The per-connection methods a WebSocket connection adds (its own unlocks), and its close. */
export interface ConnectionMethods {
  readonly methods: ReadonlyMap<string, MethodSpec>;
  close(): void;
}

export interface Personal {
  /** The methods for every caller (HTTP, and WebSocket where the connection adds none). */
  readonly methods: Map<string, MethodSpec>;
  /** A WebSocket connection's own methods: unlocks it makes are its alone. */
  connection(): ConnectionMethods;
}

const off = (name: string): MethodSpec => ({
  run: () => {
    throw new EvmRpcError(
      -32601,
      `the method ${name} does not exist/is not available: node-held accounts are off on this chain (chain config key "eth-apis" must list "internal-personal")`,
    );
  },
});

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

export function personalMethods(backend: EvmBackend, accounts: AccountStore, maxUnlockSeconds: number, o: PersonalOptions): Personal {
  if (!o.enabled) return { methods: new Map(PERSONAL_METHODS.map((name) => [name, off(name)])), connection: () => ({ methods: new Map(), close() {} }) };
  const m = new Map<string, MethodSpec>();
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => void m.set(name, { args, run });

  /** Seconds as geth takes them (a JSON number: web3.js and geth's console send 300), or a hex quantity. */
  const parseDuration = (v: unknown): number => {
    if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new ArgumentError('unlock duration must be a whole number of seconds');
    const s = typeof v === 'number' ? BigInt(v) : parseUint64(v);
    if (s < 1n || s > BigInt(maxUnlockSeconds)) throw new ArgumentError(`unlock duration must be between 1 and ${maxUnlockSeconds} seconds`);
    return Number(s);
  };

  /** The unlocked key of `from` in the caller's scope (a connection's, then the shared one), or geth's errors. */
  const unlocked = async (from: Address, own?: UnlockScope): Promise<Uint8Array> => {
    const key = own?.key(from) ?? accounts.shared.key(from);
    if (key) return key;
    if (!(await accounts.has(from))) throw new EvmRpcError(-32000, 'unknown account');
    throw new EvmRpcError(-32000, 'authentication needed: password or unlock');
  };

  def('personal_listAccounts', [], async () => (await accounts.list()).map(hexData));
  def('personal_newAccount', [required(parsePassword)], async (a) => hexData(await accounts.create(a[0] as string)));
  def('personal_importRawKey', [required(parseRawKey), required(parsePassword)], async (a) =>
    withKey(a[0] as Uint8Array, async (key) => hexData(await accounts.import(key, a[1] as string))),
  );
  const unlockArgs = [required(parseAddress), required(parsePassword), optional(parseDuration)];
  def('personal_unlockAccount', unlockArgs, async (a) => {
    if (!o.allowInsecureUnlock) {
      throw new EvmRpcError(
        -32000,
        'account unlock with HTTP access is forbidden: over HTTP an unlocked account serves every caller; unlock over the WebSocket endpoint (for that connection only), send with personal_sendTransaction, or set keystore-insecure-unlock-allowed in the chain config',
      );
    }
    await accounts.unlock(a[0] as Address, a[1] as string, a[2] as number | undefined, accounts.shared);
    return true;
  });
  def('personal_lockAccount', [required(parseAddress)], async (a) => {
    accounts.shared.lock(a[0] as Address);
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
  // geth's checks of the request come before the account's (tx-methods.ts checkSignRequest).
  const signTx = async (req: CallRequest & { readonly from: Address }, own?: UnlockScope): Promise<unknown> => {
    checkSignRequest(req);
    return withKey(await unlocked(req.from, own), (k) => signTransaction(backend, req, k));
  };
  def('eth_signTransaction', [required(parseSendRequest)], (a) => signTx(a[0] as CallRequest & { readonly from: Address }));

  const connection = (): ConnectionMethods => {
    const own = accounts.scope();
    const c = new Map<string, MethodSpec>([
      [
        'personal_unlockAccount',
        {
          args: unlockArgs,
          run: async (a) => {
            await accounts.unlock(a[0] as Address, a[1] as string, a[2] as number | undefined, own);
            return true;
          },
        },
      ],
      [
        'personal_lockAccount',
        {
          args: [required(parseAddress)],
          run: async (a) => {
            own.lock(a[0] as Address);
            accounts.shared.lock(a[0] as Address);
            return accounts.has(a[0] as Address);
          },
        },
      ],
      [
        'eth_sendTransaction',
        {
          args: [required(parseSendRequest)],
          run: async (a) => {
            const req = a[0] as CallRequest & { readonly from: Address };
            return withKey(await unlocked(req.from, own), async (k) => hexData(await backend.sendTransaction(req, k)));
          },
        },
      ],
      [
        'eth_sign',
        {
          args: [required(parseAddress), required(parseData)],
          run: async (a) => withKey(await unlocked(a[0] as Address, own), (k) => hexData(signPersonal(a[1] as Uint8Array, k))),
        },
      ],
      ['eth_signTransaction', { args: [required(parseSendRequest)], run: (a) => signTx(a[0] as CallRequest & { readonly from: Address }, own) }],
    ]);
    return { methods: c, close: () => own.close() };
  };
  return { methods: m, connection };
}
