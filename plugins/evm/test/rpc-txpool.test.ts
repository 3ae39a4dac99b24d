/**
 * The txpool_ namespace, eth_pendingTransactions, eth_getRawTransactionByHash, eth_blobBaseFee,
 * eth_fillTransaction and eth_signTransaction over the fake backend: geth's shapes, texts and
 * bounds, and their invalid inputs.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeBackend, filled, hex, makeTx, serve, ALICE, BOB, type Served } from './rpc-fake-backend.js';
import { blobBaseFee, fakeExponential } from '../src/rpc/tx-methods.js';
import { checksumAddress, inspectText } from '../src/rpc/txpool.js';

let s: Served;
test.before.each(async () => {
  s = await serve();
});
test.after.each(async () => {
  await s.close();
});

const CAROL = filled(0x0c, 20);
const err = async (method: string, params: unknown[]) => (await s.call(method, params)).error;

test('checksumAddress writes EIP-55 (as geth Address.Hex())', () => {
  // EIP-55's own examples.
  for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB']) {
    assert.is(checksumAddress(Uint8Array.from(Buffer.from(a.slice(2), 'hex'))), a);
  }
});

test('txpool_content: pending and queued by checksummed sender, then decimal nonce (keys in Go map order), pending tx objects', async () => {
  const b = s.backend;
  b.pool.push(makeTx({ from: ALICE, nonce: 9n }), makeTx({ from: ALICE, nonce: 10n }), makeTx({ from: BOB, nonce: 0n, to: null }));
  b.queued.push(makeTx({ from: ALICE, nonce: 12n }));
  const r = await s.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'txpool_content', params: [] }));
  const content = r.json.result;
  const alice = checksumAddress(ALICE);
  const bob = checksumAddress(BOB);
  assert.equal(Object.keys(content), ['pending', 'queued']);
  assert.equal(Object.keys(content.pending).sort(), [alice, bob].sort());
  assert.equal(Object.keys(content.pending[alice]).sort(), ['10', '9']);
  // Go writes map keys sorted as strings: "10" before "9", the senders as their checksummed text.
  assert.ok(r.text.indexOf('"10":') < r.text.indexOf('"9":'), r.text.slice(0, 200));
  const tx = content.pending[alice]['9'];
  assert.is(tx.blockHash, null);
  assert.is(tx.blockNumber, null);
  assert.is(tx.transactionIndex, null);
  assert.is(tx.nonce, '0x9');
  assert.is(tx.from, hex(ALICE));
  assert.is(content.pending[bob]['0'].to, null);
  assert.equal(Object.keys(content.queued), [alice]);
  assert.equal(Object.keys(content.queued[alice]), ['12']);
  // An empty pool: both maps, empty.
  b.pool.length = 0;
  b.queued.length = 0;
  assert.equal(await s.ok('txpool_content'), { pending: {}, queued: {} });
});

test('txpool_contentFrom: one sender’s pending and queued by nonce; txpool_status counts as quantities', async () => {
  const b = s.backend;
  b.pool.push(makeTx({ from: ALICE, nonce: 3n }), makeTx({ from: BOB, nonce: 1n }));
  b.queued.push(makeTx({ from: ALICE, nonce: 5n }));
  const mine = await s.ok('txpool_contentFrom', [hex(ALICE)]);
  assert.equal(Object.keys(mine), ['pending', 'queued']);
  assert.equal(Object.keys(mine.pending), ['3']);
  assert.equal(Object.keys(mine.queued), ['5']);
  assert.equal(await s.ok('txpool_contentFrom', [hex(CAROL)]), { pending: {}, queued: {} });
  assert.equal(await s.ok('txpool_status'), { pending: '0x2', queued: '0x1' });
});

test('txpool_inspect: "0xTo: V wei + G gas × P wei", "contract creation: …", the price a 1559 tx’s fee cap', async () => {
  const b = s.backend;
  b.pool.push(makeTx({ from: ALICE, nonce: 1n, to: BOB, value: 1000n, gas: 21_000n, maxFeePerGas: 50n, gasPrice: 50n }));
  b.queued.push(makeTx({ from: ALICE, nonce: 3n, to: null, value: 0n, gas: 100_000n, type: 0, gasPrice: 7n, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }));
  const r = await s.ok('txpool_inspect');
  const alice = checksumAddress(ALICE);
  assert.equal(r, {
    pending: { [alice]: { '1': `${checksumAddress(BOB)}: 1000 wei + 21000 gas × 50 wei` } },
    queued: { [alice]: { '3': 'contract creation: 0 wei + 100000 gas × 7 wei' } },
  });
  assert.is(inspectText(makeTx({ to: null, value: 1n, gas: 2n, maxFeePerGas: 3n })), 'contract creation: 1 wei + 2 gas × 3 wei');
});

test('txpool_ and eth_pendingTransactions replies are sized before they are built: -32003 past the budget, the backend read once', async () => {
  await s.close();
  const backend = new FakeBackend();
  s = await serve({ limits: { maxResponseChars: 100_000 } }, backend);
  for (let i = 0; i < 3; i++) backend.pool.push(makeTx({ input: new Uint8Array(20_000) }));
  for (const method of ['txpool_content', 'txpool_contentFrom']) {
    const params = method === 'txpool_contentFrom' ? [hex(ALICE)] : [];
    assert.equal(await err(method, params), { code: -32003, message: 'response too large' }, method);
  }
  // A batch: the rest is not run once the budget is spent.
  const r = await s.post(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'txpool_content' }, { jsonrpc: '2.0', id: 2, method: 'eth_chainId' }]));
  assert.equal(r.json.map((x: { error?: { code: number } }) => x.error?.code), [-32003, -32003]);
  // Small enough: served.
  backend.pool.length = 1;
  assert.ok((await s.ok('txpool_content')).pending);
});

test('txpool_ invalid inputs: -32602 with geth texts', async () => {
  assert.equal(await err('txpool_content', [1]), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.equal(await err('txpool_status', ['x']), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.equal(await err('txpool_inspect', [{}]), { code: -32602, message: 'too many arguments, want at most 0' });
  assert.equal(await err('txpool_contentFrom', []), { code: -32602, message: 'missing value for required argument 0' });
  assert.equal(await err('txpool_contentFrom', ['0x1234']), { code: -32602, message: 'invalid argument 0: hex string has length 4, want 40 for address' });
  assert.equal((await err('txpool_contentFrom', [5]))?.code, -32602);
  assert.equal((await err('txpool_contentFrom', ['0x' + 'a'.repeat(10_000)]))?.code, -32602);
  assert.equal((await s.call('txpool_content', { x: 1 })).error, { code: -32602, message: 'non-array args' });
});

test('eth_pendingTransactions: the pooled executable txs of node-held accounts only; [] while they are off', async () => {
  s.backend.pool.push(makeTx({ from: ALICE }));
  assert.equal(await s.ok('eth_pendingTransactions'), []);
  await s.close();
  s = await serve({ personal: { enabled: true, allowInsecureUnlock: true } });
  const key = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
  const mine = Uint8Array.from(Buffer.from('8db97c7cece249c2b98bdc0226cc4c2a57bf52fc', 'hex'));
  await s.ok('personal_importRawKey', [key, 'pw']);
  s.backend.pool.push(makeTx({ from: ALICE, nonce: 1n }), makeTx({ from: mine, nonce: 4n }));
  s.backend.queued.push(makeTx({ from: mine, nonce: 6n }));
  const txs = await s.ok('eth_pendingTransactions');
  assert.is(txs.length, 1);
  assert.is(txs[0].from, hex(mine));
  assert.is(txs[0].nonce, '0x4');
  assert.is(txs[0].blockHash, null);
  assert.equal(await err('eth_pendingTransactions', [1]), { code: -32602, message: 'too many arguments, want at most 0' });
});

test('eth_getRawTransactionByHash: the encoding as 0x hex; null when unknown; invalid hashes -32602', async () => {
  const hash = filled(0x42);
  s.backend.raws.set(Buffer.from(hash).toString('hex'), Uint8Array.of(2, 0xc1, 0x80));
  assert.is(await s.ok('eth_getRawTransactionByHash', [hex(hash)]), '0x02c180');
  assert.is(await s.ok('eth_getRawTransactionByHash', [hex(filled(0x43))]), null);
  assert.equal(await err('eth_getRawTransactionByHash', []), { code: -32602, message: 'missing value for required argument 0' });
  assert.equal((await err('eth_getRawTransactionByHash', ['0x12']))?.code, -32602);
  assert.equal((await err('eth_getRawTransactionByHash', [{}]))?.code, -32602);
  assert.equal(await err('eth_getRawTransactionByHash', [hex(hash), 1]), { code: -32602, message: 'too many arguments, want at most 1' });
});

test('eth_blobBaseFee: EIP-4844 from the head’s excess blob gas (0x1 at none); fake_exponential vectors', async () => {
  // The fake chain's headers carry no excessBlobGas: null, as geth answers a head without it.
  assert.is(await s.ok('eth_blobBaseFee'), null);
  const b = s.backend.blocks[s.backend.blocks.length - 1]!.block;
  (b.header as { excessBlobGas?: bigint }).excessBlobGas = 0n;
  assert.is(await s.ok('eth_blobBaseFee'), '0x1');
  (b.header as { excessBlobGas?: bigint }).excessBlobGas = 10n * 3_338_477n;
  assert.is(await s.ok('eth_blobBaseFee'), '0x' + blobBaseFee(10n * 3_338_477n).toString(16));
  assert.is(blobBaseFee(10n * 3_338_477n), 22_026n); // e^10 = 22,026.47
  for (const [f, n, d, want] of [[1n, 0n, 1n, 1n], [38_493n, 0n, 1_000n, 38_493n], [0n, 1_234n, 2_345n, 0n], [1n, 2n, 1n, 6n], [1n, 4n, 2n, 6n], [1n, 3n, 1n, 16n], [1n, 6n, 2n, 18n], [1n, 4n, 1n, 49n], [1n, 8n, 2n, 50n], [10n, 8n, 2n, 542n], [1n, 5n, 2n, 11n], [1n, 50_000_000n, 2_225_652n, 5_709_098_764n]] as const) {
    assert.is(fakeExponential(f, n, d), want, `${f} ${n} ${d}`);
  }
  assert.equal(await err('eth_blobBaseFee', ['latest']), { code: -32602, message: 'too many arguments, want at most 0' });
});

test('eth_fillTransaction: {raw, tx} as geth writes a types.Transaction (no from), an EIP-1559 gasPrice its fee cap as the spec asks; invalid inputs', async () => {
  const r = await s.ok('eth_fillTransaction', [{ from: hex(ALICE), to: hex(BOB), value: '0x1' }]);
  assert.is(r.raw, '0x02c180');
  assert.equal(Object.keys(r.tx), ['type', 'chainId', 'nonce', 'to', 'gas', 'gasPrice', 'maxPriorityFeePerGas', 'maxFeePerGas', 'value', 'input', 'accessList', 'v', 'r', 's', 'yParity', 'hash']);
  assert.is(r.tx.gasPrice, r.tx.maxFeePerGas);
  assert.is(r.tx.v, '0x0');
  assert.is(s.backend.calls.find((c) => c.method === 'fillTransaction') !== undefined, true);
  assert.equal(await err('eth_fillTransaction', []), { code: -32602, message: 'missing value for required argument 0' });
  assert.equal(await err('eth_fillTransaction', [5]), { code: -32602, message: 'invalid argument 0: cannot unmarshal number into transaction object' });
  assert.equal((await err('eth_fillTransaction', [{ gas: '0x' + 'f'.repeat(17) }]))?.message, 'invalid argument 0: gas: hex number > 64 bits');
  assert.equal((await err('eth_fillTransaction', [{ gasPrice: '0x1', maxFeePerGas: '0x1' }]))?.message, 'invalid argument 0: both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified');
});

test('eth_signTransaction: -32601 while node-held accounts are off', async () => {
  const e = await err('eth_signTransaction', [{ from: hex(ALICE), gas: '0x5208', gasPrice: '0x1', nonce: '0x0' }]);
  assert.is(e?.code, -32601);
  assert.match(e!.message, /^the method eth_signTransaction does not exist\/is not available: node-held accounts are off/);
});

test("eth_signTransaction: geth's texts for a request without gas, fees or nonce, an unknown or locked account; {raw, tx} once unlocked; not sent", async () => {
  await s.close();
  s = await serve({ personal: { enabled: true, allowInsecureUnlock: true } });
  const key = '56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
  const from = '0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc';
  const full = { from, to: hex(BOB), gas: '0x5208', maxFeePerGas: '0x2', maxPriorityFeePerGas: '0x1', nonce: '0x0' };
  const sign = (tx: Record<string, unknown>) => err('eth_signTransaction', [tx]);
  assert.equal(await sign({ ...full, gas: undefined }), { code: -32000, message: 'gas not specified' });
  assert.equal(await sign({ ...full, maxPriorityFeePerGas: undefined }), { code: -32000, message: 'missing gasPrice or maxFeePerGas/maxPriorityFeePerGas' });
  assert.equal(await sign({ ...full, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }), { code: -32000, message: 'missing gasPrice or maxFeePerGas/maxPriorityFeePerGas' });
  assert.equal(await sign({ ...full, nonce: undefined }), { code: -32000, message: 'nonce not specified' });
  assert.equal(await sign(full), { code: -32000, message: 'unknown account' });
  await s.ok('personal_importRawKey', [key, 'pw']);
  assert.equal(await sign(full), { code: -32000, message: 'authentication needed: password or unlock' });
  await s.ok('personal_unlockAccount', [from, 'pw', 60]);
  const r = await s.ok('eth_signTransaction', [full]);
  assert.is(r.raw, '0x02c101');
  assert.ok(r.tx.hash);
  assert.is(s.backend.sent.length, 1);
  assert.is(Buffer.from(s.backend.sent[0]!.key).toString('hex'), key);
  assert.not.ok(s.backend.calls.some((c) => c.method === 'sendTransaction' || c.method === 'sendRawTransaction'), 'not sent');
  // A legacy request signs with gasPrice alone.
  assert.ok((await s.ok('eth_signTransaction', [{ from, to: hex(BOB), gas: '0x5208', gasPrice: '0x1', nonce: '0x1' }])).raw);
  // Invalid inputs.
  assert.equal(await err('eth_signTransaction', []), { code: -32602, message: 'missing value for required argument 0' });
  assert.equal(await err('eth_signTransaction', [{ gas: '0x1' }]), { code: -32602, message: 'invalid argument 0: from: missing value (the sending account)' });
  assert.equal((await err('eth_signTransaction', ['0x00']))?.code, -32602);
  assert.equal(await err('eth_signTransaction', [full, 1]), { code: -32602, message: 'too many arguments, want at most 1' });
});

test('extensions may add txpool_ methods now', async () => {
  await s.close();
  s = await serve({ extraMethods: new Map([['txpool_extra', async () => 1]]) });
  assert.is(await s.ok('txpool_extra'), 1);
});

test.run();
