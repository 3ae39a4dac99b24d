/**
 * The txpool_ namespace (txpool_content, txpool_contentFrom, txpool_inspect, txpool_status) and
 * eth_pendingTransactions, as geth and coreth answer them: `pending` (executable) and `queued` (after
 * a nonce gap) maps by sender — its checksummed address — then nonce (a decimal string), keys in
 * the order Go writes a map's (sorted as strings); each tx as a pending transaction object (no
 * block fields; an EIP-1559 tx's gasPrice is its fee cap), or for inspect the text
 * "0xTo: V wei + G gas × P wei" ("contract creation: …" for a create).
 *
 * The pool is bounded (chain/mempool.ts: 6,144 slots of 32 KiB by default), yet its content as JSON
 * could be ~400 MB: a reply is sized before it is built and refused with -32003 "response too large"
 * past what is left of the request's reply budget (or -32005 when the replies being built over all
 * requests fill their pool), then written in pieces with turns of the event loop between them, as
 * eth_getLogs' are (log-reply.ts). Tests: rpc-txpool.test.ts ("txpool_content is sized before it is
 * built"), chain.test.ts, test/e2e/evm-txpool.test.ts.
 */
import { checksumAddress } from '../checksum.js';
import type { Address, EvmBackend, StopSignal, TxView } from '../evm-backend.js';
import { required, type MethodSpec } from './dispatch.js';
import { txJson } from './format.js';
import { hexData, parseAddress, quantity } from './hex.js';
import { RawJson, Slicer } from './request.js';

export { checksumAddress };

/**
 * The most characters a pending tx's JSON takes: its fields (at most ~1,100: 32-byte quantities,
 * addresses, the hash, the keys), two per input byte, an access list's entries and keys, plus its
 * place in the maps (the sender's and the nonce's keys).
 */
export function txJsonBound(t: TxView): number {
  let n = 1_300 + 2 * t.input.length;
  for (const e of t.accessList ?? []) n += 70 + 69 * e.storageKeys.length;
  return n;
}

/** The most characters of an inspect line and its keys: an address, three decimal 256-bit numbers. */
const INSPECT_BOUND = 400;

/** geth's inspect text of a tx. */
export function inspectText(t: TxView): string {
  const price = t.maxFeePerGas ?? t.gasPrice;
  const head = t.to ? checksumAddress(t.to) : 'contract creation';
  return `${head}: ${t.value} wei + ${t.gas} gas × ${price} wei`;
}

/** Txs per piece of a reply between two looks at the clock. */
const PIECE = 256;

/** `{"nonce": value, …}` of one sender's txs (in nonce order), keys sorted as strings. */
function byNonce(txs: readonly TxView[], value: (t: TxView) => string): string {
  const entries = txs.map((t) => [t.nonce.toString(10), value(t)] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return '{' + entries.map(([k, v]) => JSON.stringify(k) + ':' + v).join(',') + '}';
}

/** `{"0xSender": {"nonce": …}, …}` of txs listed by sender then nonce, senders sorted as their checksummed strings. */
async function bySender(txs: readonly TxView[], value: (t: TxView) => string, slicer: Slicer, signal: StopSignal): Promise<string> {
  const groups = new Map<string, TxView[]>();
  let done = 0;
  for (const t of txs) {
    const key = hexData(t.from);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(t);
  }
  const parts: Array<[string, string]> = [];
  for (const g of groups.values()) {
    if (signal.aborted) throw signal.reason;
    parts.push([checksumAddress(g[0]!.from), byNonce(g, value)]);
    done += g.length;
    if (done >= PIECE) {
      done = 0;
      await slicer.pause();
    }
  }
  parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return '{' + parts.map(([k, v]) => JSON.stringify(k) + ':' + v).join(',') + '}';
}

const pendingTxText = (t: TxView): string => JSON.stringify(txJson(t));
const inspectValue = (t: TxView): string => JSON.stringify(inspectText(t));

/** `accounts`: the node-held accounts (eth_pendingTransactions lists their pooled txs only). */
export function txpoolMethods(backend: EvmBackend, accounts: () => Promise<readonly Address[]>): Map<string, MethodSpec> {
  const m = new Map<string, MethodSpec>();
  const def = (name: string, args: MethodSpec['args'], run: MethodSpec['run']): void => void m.set(name, { args, run });

  def('txpool_status', [], () => {
    const s = backend.poolStatus();
    return { pending: quantity(s.pending), queued: quantity(s.queued) };
  });

  def('txpool_content', [], async (_a, ctx) => {
    const { pending, queued } = backend.poolContent();
    let bound = 64;
    for (const t of pending) bound += txJsonBound(t);
    for (const t of queued) bound += txJsonBound(t);
    ctx.budget.reserve(bound);
    const slicer = new Slicer();
    const p = await bySender(pending, pendingTxText, slicer, ctx.signal);
    const q = await bySender(queued, pendingTxText, slicer, ctx.signal);
    return new RawJson(`{"pending":${p},"queued":${q}}`);
  });

  def('txpool_contentFrom', [required(parseAddress)], async (a, ctx) => {
    const { pending, queued } = backend.poolContent(a[0] as Address);
    let bound = 64;
    for (const t of pending) bound += txJsonBound(t);
    for (const t of queued) bound += txJsonBound(t);
    ctx.budget.reserve(bound);
    return new RawJson(`{"pending":${byNonce(pending, pendingTxText)},"queued":${byNonce(queued, pendingTxText)}}`);
  });

  def('txpool_inspect', [], async (_a, ctx) => {
    const { pending, queued } = backend.poolContent();
    ctx.budget.reserve(64 + INSPECT_BOUND * (pending.length + queued.length));
    const slicer = new Slicer();
    const p = await bySender(pending, inspectValue, slicer, ctx.signal);
    const q = await bySender(queued, inspectValue, slicer, ctx.signal);
    return new RawJson(`{"pending":${p},"queued":${q}}`);
  });

  // geth: the executable pooled txs whose sender is one of the node's accounts (none while node-held accounts are off).
  def('eth_pendingTransactions', [], async (_a, ctx) => {
    const txs: TxView[] = [];
    for (const account of await accounts()) txs.push(...backend.poolContent(account).pending);
    let bound = 2;
    for (const t of txs) bound += txJsonBound(t);
    ctx.budget.reserve(bound);
    const slicer = new Slicer();
    const pieces: string[] = [];
    for (let i = 0; i < txs.length; i += PIECE) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      pieces.push(txs.slice(i, i + PIECE).map(pendingTxText).join(','));
      await slicer.pause();
    }
    return new RawJson('[' + pieces.join(',') + ']');
  });
  return m;
}
