/**
 * The txpool_ namespace and the raw / sign-only tx methods on a real node, through ethers v6's
 * provider.send: txpool_content with an executable (pending) tx and one after a nonce gap (queued)
 * under the checksummed sender and decimal nonces, txpool_status / txpool_inspect /
 * eth_pendingTransactions beside them, eth_getRawTransactionByHash's bytes parsing back to the same
 * tx (pooled and mined), eth_signTransaction with a personal_-imported and unlocked account (not
 * sent), eth_fillTransaction, eth_blobBaseFee, and coreth's RPC fee cap. Cornice only (hardhat's
 * node has no node-held accounts in this form).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonRpcProvider, Transaction, Wallet, getAddress } from 'ethers';
import { EWOQ_EVM_KEY, evmTargetKind, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';

const cornice = evmTargetKind() === 'cornice';
let dir: string;
let target: EvmTarget;
let provider: JsonRpcProvider;
const ewoq = new Wallet(EWOQ_EVM_KEY);
const other = Wallet.createRandom().address;

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-txpool-'));
    if (!cornice) return;
    // Node-held accounts on, HTTP unlocks allowed: eth_signTransaction and eth_pendingTransactions need them.
    await mkdir(join(dir, 'configs', 'chains', 'C'), { recursive: true });
    await writeFile(
      join(dir, 'configs', 'chains', 'C', 'config.json'),
      JSON.stringify({
        'eth-apis': ['eth', 'eth-filter', 'net', 'web3', 'internal-eth', 'internal-blockchain', 'internal-transaction', 'internal-personal'],
        'keystore-insecure-unlock-allowed': true,
      }),
    );
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
  }),
);

test.after(async () => {
  provider?.destroy();
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function receipt(hash: string): Promise<any> {
  for (let i = 0; i < 500; i++) {
    const r = await provider.send('eth_getTransactionReceipt', [hash]);
    if (r) return r;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no receipt for ${hash}`);
}

test('txpool_content: a pending and a queued (nonce-gap) tx under the checksummed sender; status, inspect, eth_pendingTransactions; raw bytes parse back', async () => {
  if (!cornice) return;
  const { chainId } = await provider.getNetwork();
  const fees = { type: 2, chainId, gasLimit: 21_000n, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1n };
  // A block takes an executable tx within milliseconds of its admission; the pool is read in the
  // same JSON-RPC batch right after it, which usually comes first. Each try uses a fresh sender
  // (funded, held by the node so that eth_pendingTransactions lists it) until one does.
  const senders = Array.from({ length: 8 }, () => Wallet.createRandom());
  const start = await provider.getTransactionCount(ewoq.address, 'pending');
  const funding = await Promise.all(senders.map((w, i) => ewoq.signTransaction({ ...fees, nonce: start + i, to: w.address, value: 10n ** 18n })));
  for (const raw of funding) await receipt(await provider.send('eth_sendRawTransaction', [raw]));
  for (const w of senders) await provider.send('personal_importRawKey', [w.privateKey.slice(2), 'pw']);
  let seen: { wallet: ReturnType<typeof Wallet.createRandom>; next: string; gapped: string; nextHash: string; gappedHash: string; content: any; status: any; inspect: any; mine: any } | undefined;
  for (const [i, wallet] of senders.entries()) {
    const next = await wallet.signTransaction({ ...fees, nonce: 0, to: other, value: 1n });
    const gapped = await wallet.signTransaction({ ...fees, nonce: 2, to: other, value: 2n });
    // One HTTP batch (ethers batches calls made together), run in order.
    const [gappedHash, nextHash, content, status, inspect, mine] = await Promise.all([
      provider.send('eth_sendRawTransaction', [gapped]),
      provider.send('eth_sendRawTransaction', [next]),
      provider.send('txpool_content', []),
      provider.send('txpool_status', []),
      provider.send('txpool_inspect', []),
      provider.send('eth_pendingTransactions', []),
    ]);
    assert.equal(Object.keys(content), ['pending', 'queued']);
    assert.is(status.queued, `0x${(i + 1).toString(16)}`, 'every try\'s gapped tx waits');
    // A try counts when the whole batch ran before the block took the tx (eth_pendingTransactions runs last).
    if (content.pending[wallet.address] && mine.some((t: { hash: string }) => t.hash === nextHash)) {
      seen = { wallet, next, gapped, nextHash, gappedHash, content, status, inspect, mine };
      break;
    }
  }
  assert.ok(seen, 'a pending tx seen in txpool_content');
  const { wallet, gapped, nextHash, gappedHash, content, inspect, mine } = seen!;
  const sender = wallet.address;
  assert.is(sender, getAddress(sender.toLowerCase()), 'keyed by the checksummed address');
  assert.equal(Object.keys(content.pending[sender]), ['0']);
  assert.is(content.pending[sender]['0'].hash, nextHash);
  assert.is(content.pending[sender]['0'].blockHash, null);
  assert.equal(Object.keys(content.queued[sender]), ['2']);
  assert.is(content.queued[sender]['2'].hash, gappedHash);
  assert.is(inspect.pending[sender]['0'], `${getAddress(other)}: 1 wei + 21000 gas × 100000000000 wei`);
  assert.is(inspect.queued[sender]['2'], `${getAddress(other)}: 2 wei + 21000 gas × 100000000000 wei`);
  assert.ok(
    mine.some((t: { hash: string }) => t.hash === nextHash),
    'eth_pendingTransactions: the executable txs of node-held accounts',
  );
  assert.not.ok(mine.some((t: { hash: string }) => t.hash === gappedHash), 'not the queued ones');
  const from = await provider.send('txpool_contentFrom', [sender]);
  assert.equal(Object.keys(from.queued), ['2']);

  // Raw bytes: the queued tx while pooled, the other once mined; both parse back to their hash.
  const pooledRaw = await provider.send('eth_getRawTransactionByHash', [gappedHash]);
  assert.is(pooledRaw, gapped);
  assert.is(Transaction.from(pooledRaw).hash, gappedHash);
  await receipt(nextHash);
  const minedRaw = await provider.send('eth_getRawTransactionByHash', [nextHash]);
  assert.is(Transaction.from(minedRaw).hash, nextHash);
  assert.is(Transaction.from(minedRaw).from, sender);
  assert.is(await provider.send('eth_getRawTransactionByHash', ['0x' + '11'.repeat(32)]), null);
  // Filling the gap promotes the queued tx, which is then mined.
  const fill = await wallet.signTransaction({ ...fees, nonce: 1, to: other, value: 3n });
  await receipt(await provider.send('eth_sendRawTransaction', [fill]));
  await receipt(gappedHash);
  assert.is((await provider.send('txpool_contentFrom', [sender])).queued['2'], undefined);
});

test('eth_signTransaction with a personal_ imported and unlocked account: {raw, tx}, parsed by ethers to the same tx, not sent; geth texts before it', async () => {
  if (!cornice) return;
  const fresh = Wallet.createRandom();
  const address = await provider.send('personal_importRawKey', [fresh.privateKey.slice(2), 'pw']);
  assert.is(address, fresh.address.toLowerCase());
  const req = { from: address, to: other, value: '0x5', gas: '0x5208', maxFeePerGas: '0x174876e800', maxPriorityFeePerGas: '0x0', nonce: '0x0' };
  const refused = async (tx: Record<string, unknown>) => {
    try {
      await provider.send('eth_signTransaction', [tx]);
    } catch (e) {
      return (e as { error?: { message?: string } }).error?.message;
    }
    throw new Error('must be refused');
  };
  assert.is(await refused({ ...req, gas: undefined }), 'gas not specified');
  assert.is(await refused({ ...req, nonce: undefined }), 'nonce not specified');
  assert.is(await refused(req), 'authentication needed: password or unlock');
  assert.is(await provider.send('personal_unlockAccount', [address, 'pw', 60]), true);
  const signed = await provider.send('eth_signTransaction', [req]);
  const parsed = Transaction.from(signed.raw);
  assert.is(parsed.from, fresh.address);
  assert.is(parsed.hash, signed.tx.hash);
  assert.is(parsed.nonce, 0);
  assert.is(parsed.value, 5n);
  assert.is(signed.tx.gasPrice, signed.tx.maxFeePerGas); // the fee cap, as the execution-apis schema asks of a tx not in a block
  assert.is(signed.tx.maxFeePerGas, '0x174876e800');
  assert.is(await provider.send('eth_getTransactionByHash', [signed.tx.hash]), null, 'not sent');

  // eth_fillTransaction: the defaults, unsigned.
  const filled = await provider.send('eth_fillTransaction', [{ from: ewoq.address, to: other, value: '0x1' }]);
  const unsigned = Transaction.from(filled.raw);
  assert.is(BigInt(unsigned.signature?.r ?? 0), 0n, 'unsigned: r, s and v zero, as geth encodes it');
  assert.is(unsigned.nonce, await provider.getTransactionCount(ewoq.address, 'pending'));
  assert.is(unsigned.gasLimit, 21_000n);
  assert.is(filled.tx.v, '0x0');
  // eth_blobBaseFee: no blob gas here, the minimum.
  assert.is(await provider.send('eth_blobBaseFee', []), '0x1');
});

test("coreth's RPC fee cap over eth_sendRawTransaction: geth's text", async () => {
  if (!cornice) return;
  const { chainId } = await provider.getNetwork();
  const nonce = await provider.getTransactionCount(ewoq.address, 'pending');
  const raw = await ewoq.signTransaction({ type: 2, chainId, nonce, to: other, gasLimit: 21_000n, maxFeePerGas: (101n * 10n ** 18n) / 21_000n + 1n, maxPriorityFeePerGas: 0n });
  const r = await target.call('eth_sendRawTransaction', [raw]);
  assert.equal(r.error, { code: -32000, message: 'tx fee (101.00 ether) exceeds the configured cap (100.00 ether)' });
});

test.run();
