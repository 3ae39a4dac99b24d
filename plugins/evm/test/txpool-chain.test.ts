/**
 * On a real chain: the pool's snapshot (txpool_content's pending and queued), raw tx bytes pending
 * and mined, eth_fillTransaction / eth_signTransaction, and geth's texts for raw txs whose values
 * @ethereumjs refuses (fees past 256 bits, gas × fee cap past 2^256-1, the RPC fee cap).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { RLP } from '@ethereumjs/rlp';
import { createTx, createTxFromRLP } from '@ethereumjs/tx';
import { bigIntToUnpaddedBytes, toChecksumAddress } from '@ethereumjs/util';
import { EvmRpcError } from '../src/index.js';
import { keccak256 } from '../src/chain/crypto.js';
import { goFixed2, txFeeRefusal } from '../src/chain/tx-fee-cap.js';
import { decodeRawTx, rawTxFields } from '../src/chain/tx-decode.js';
import { CHAIN_ID, EWOQ, EWOQ_KEY, GWEI, addr, buildAndAccept, common, hex, key, signedTx, startVM } from './helpers.js';

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, EvmRpcError, String(e));
    assert.is((e as EvmRpcError).rpcCode, -32000);
    return (e as Error).message;
  }
  throw new Error('must be refused');
}

const int = (n: bigint): Uint8Array => bigIntToUnpaddedBytes(n);

/** A raw EIP-1559 tx from raw integers (any size), signed with `signer` over its own fields (junk signature when none). */
function raw1559(o: { nonce?: bigint; tip?: bigint; feeCap?: bigint; gas?: bigint; value?: bigint; v?: Uint8Array; signer?: Uint8Array }): Uint8Array {
  const fields = [int(CHAIN_ID), int(o.nonce ?? 0n), int(o.tip ?? 0n), int(o.feeCap ?? 50n * GWEI), int(o.gas ?? 21_000n), addr(1), int(o.value ?? 0n), new Uint8Array(), []];
  let sig: Uint8Array[] = [o.v ?? int(1n), int(0x1234n), int(0x5678n)];
  if (o.signer) {
    const digest = keccak256(Uint8Array.from([2, ...RLP.encode(fields)]));
    const rec = secp256k1.sign(digest, o.signer, { prehash: false, lowS: true, format: 'recovered' });
    sig = [int(BigInt(rec[0]!)), int(BigInt(hex(rec.subarray(1, 33)))), int(BigInt(hex(rec.subarray(33, 65))))];
  }
  return Uint8Array.from([2, ...RLP.encode([...fields, ...sig])]);
}

test('the pool snapshot: executable txs as pending, gapped ones as queued, by sender then nonce; status counts them', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    await be.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    await be.sendRawTransaction(signedTx({ nonce: 1n, to: addr(1), value: 2n }).serialize());
    await be.sendRawTransaction(signedTx({ nonce: 3n, to: addr(1), value: 3n }).serialize());
    const content = be.poolContent();
    assert.equal(content.pending.map((t) => t.nonce), [0n, 1n]);
    assert.equal(content.queued.map((t) => t.nonce), [3n]);
    assert.equal(hex(content.pending[0]!.from), hex(EWOQ));
    assert.is(content.pending[0]!.gasPrice, 50n * GWEI, 'a pending 1559 tx: its fee cap');
    assert.equal(be.poolStatus(), { pending: 2, queued: 1 });
    assert.equal(be.poolContent(addr(7)), { pending: [], queued: [] });
    assert.is(be.poolContent(EWOQ).queued.length, 1);
    // The gap filled: all three executable.
    await be.sendRawTransaction(signedTx({ nonce: 2n, to: addr(1), value: 4n }).serialize());
    assert.equal(be.poolStatus(), { pending: 4, queued: 0 });
    await buildAndAccept(vm);
    assert.equal(be.poolStatus(), { pending: 0, queued: 0 });
  } finally {
    await vm.shutdown();
  }
});

test('rawTransaction: the bytes sent, while pooled and once mined; undefined when unknown', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const tx = signedTx({ nonce: 0n, to: addr(1), value: 5n });
    const raw = tx.serialize();
    const hash = await be.sendRawTransaction(raw);
    assert.is(hex((await be.rawTransaction(hash))!), hex(raw));
    await buildAndAccept(vm);
    assert.is(hex((await be.rawTransaction(hash))!), hex(raw));
    assert.is(hex(keccak256(raw)), hex(hash));
    assert.is(await be.rawTransaction(new Uint8Array(32)), undefined);
  } finally {
    await vm.shutdown();
  }
});

test('eth_fillTransaction / eth_signTransaction: defaults filled as eth_sendTransaction fills them; the unsigned hash is its encoding’s; nothing sent', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    await be.sendRawTransaction(signedTx({ nonce: 0n, to: addr(1), value: 1n }).serialize());
    const filled = await be.fillTransaction({ from: EWOQ, to: addr(2), value: 7n });
    assert.is(filled.tx.nonce, 1n, 'the pending nonce');
    assert.is(filled.tx.gas, 21_000n);
    assert.is(filled.tx.type, 2);
    assert.is(filled.tx.v, 0n);
    assert.is(hex(filled.tx.hash), hex(keccak256(filled.raw)));
    const decoded = createTxFromRLP(filled.raw, { common });
    assert.is(decoded.nonce, 1n);
    assert.is(decoded.isSigned(), false);
    // Legacy with a gasPrice: no chainId for an unsigned (unprotected) one, as geth writes it.
    const legacy = await be.fillTransaction({ to: addr(2), gasPrice: 30n * GWEI, gas: 21_000n });
    assert.is(legacy.tx.type, 0);
    assert.is(legacy.tx.chainId, undefined);
    assert.is(hex(legacy.tx.from), hex(new Uint8Array(20)));
    assert.is(await refusal(be.fillTransaction({ from: EWOQ })), 'contract creation without any data provided');
    // A fill is not bounded by the RPC fee cap (geth checks it when a tx is signed or sent).
    assert.ok((await be.fillTransaction({ from: EWOQ, to: addr(2), gas: 21_000n, gasPrice: 2n ** 250n })).raw);

    const signed = await be.signTransaction({ from: EWOQ, to: addr(2), value: 7n, gas: 21_000n, maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: 0n, nonce: 1n }, EWOQ_KEY);
    const tx = createTxFromRLP(signed.raw, { common });
    assert.is(hex(tx.getSenderAddress().bytes), hex(EWOQ));
    assert.is(hex(tx.hash()), hex(signed.tx.hash));
    assert.equal(be.poolStatus(), { pending: 1, queued: 0 }, 'not sent');
    assert.match(await refusal(be.signTransaction({ from: EWOQ, to: addr(2), gas: 21_000n, gasPrice: 2n ** 200n, nonce: 1n }, EWOQ_KEY)), /^tx fee \(\d+\.00 ether\) exceeds the configured cap \(100\.00 ether\)$/);
    // The signed bytes are admitted as sent.
    assert.is(hex(await be.sendRawTransaction(signed.raw)), hex(signed.tx.hash));
  } finally {
    await vm.shutdown();
  }
});

test("raw txs with values @ethereumjs refuses get geth's texts: fee cap / tip past 256 bits, v past 256 bits, gas × fee cap past 2^256-1", async () => {
  const vm = await startVM({ opts: { rpcTxFeeCap: 0 } });
  try {
    const send = (raw: Uint8Array) => vm.backend.sendRawTransaction(raw);
    assert.is(await refusal(send(raw1559({ feeCap: 2n ** 256n, tip: 1n }))), 'max fee per gas higher than 2^256-1');
    assert.is(await refusal(send(raw1559({ feeCap: 1n, tip: 2n ** 256n }))), 'max priority fee per gas higher than 2^256-1');
    assert.is(await refusal(send(raw1559({ feeCap: 2n ** 256n, gas: 200_000_000n }))), 'exceeds block gas limit', 'the gas limit first, as geth');
    assert.is(await refusal(send(raw1559({ v: new Uint8Array(33).fill(1) }))), 'invalid sender');
    assert.is(await refusal(send(raw1559({ v: Uint8Array.of(2) }))), 'invalid sender', 'a y-parity of 2');
    // A legacy v under 35 but not 0, 1, 27 or 28: protected, for the chain geth derives in uint64 arithmetic.
    const unprotected = RLP.decode(createTx({ type: 0, nonce: 0n, to: addr(1), gasLimit: 21_000n, gasPrice: 50n * GWEI }, { common }).sign(EWOQ_KEY).serialize()) as Uint8Array[];
    unprotected[6] = Uint8Array.of(30);
    assert.is(await refusal(send(RLP.encode(unprotected))), 'invalid chain id for signer: have 9223372036854775805 want 43110');
    unprotected[6] = Uint8Array.of(1);
    assert.is(await refusal(send(RLP.encode(unprotected))), 'only replay-protected (EIP-155) transactions allowed over RPC');
    // Signed over its own fields: the sender is known, the cost is past any balance.
    const feeCap = 2n ** 250n;
    const cost = 21_000n * feeCap;
    const balance = await vm.backend.balance(EWOQ, 'latest');
    assert.is(await refusal(send(raw1559({ feeCap, signer: EWOQ_KEY }))), `insufficient funds for gas * price + value: balance ${balance}, tx cost ${cost}, overshot ${cost - balance}`);
    const value = 2n ** 260n;
    const cost2 = 21_000n * 50n * GWEI + value;
    assert.is(await refusal(send(raw1559({ value, signer: EWOQ_KEY }))), `insufficient funds for gas * price + value: balance ${balance}, tx cost ${cost2}, overshot ${cost2 - balance}`);
    // The same tx from an unfunded key: its own sender is read (balance 0).
    assert.is(await refusal(send(raw1559({ feeCap, signer: key(9) }))), `insufficient funds for gas * price + value: balance 0, tx cost ${cost}, overshot ${cost}`);
    // Signed by the node (eth_sendTransaction / personal_sendTransaction) with the cap off: the same text.
    assert.match(await refusal(vm.backend.sendTransaction({ from: EWOQ, to: addr(1), gas: 21_000n, gasPrice: feeCap }, EWOQ_KEY)), /^insufficient funds for gas \* price \+ value: balance \d+, tx cost 3799427928\d+, overshot \d+$/);
    const legacy = await vm.backend.signTransaction({ from: EWOQ, to: addr(1), gas: 21_000n, gasPrice: feeCap, nonce: 0n }, EWOQ_KEY);
    const back = decodeRawTx(legacy.raw, rawTxFields(legacy.raw), common);
    assert.is(hex(back.hash()), hex(legacy.tx.hash), 'decodes to the same tx');
    assert.is(hex(back.getSenderAddress().bytes), hex(EWOQ), 'signed over its real gas');
    // Gossiped txs take the same path (no fee cap there).
    assert.match(await refusal(vm.chain.admission.admitGossiped(raw1559({ feeCap, signer: EWOQ_KEY }))), /^insufficient funds for gas \* price \+ value/);
  } finally {
    await vm.shutdown();
  }
});

test('the RPC fee cap (coreth rpc-tx-fee-cap, 100 by default): geth’s text, before the pool’s checks; gossip is not bounded by it', async () => {
  const vm = await startVM();
  try {
    const be = vm.backend;
    const feeCap = 2n ** 250n;
    const fee = Number((21_000n * feeCap) / 10n ** 18n);
    assert.is(await refusal(be.sendRawTransaction(raw1559({ feeCap, signer: EWOQ_KEY }))), `tx fee (${goFixed2(fee)} ether) exceeds the configured cap (100.00 ether)`);
    // Just past the cap: 100.01 ether.
    const over = raw1559({ feeCap: (10_001n * 10n ** 16n) / 21_000n + 1n, signer: EWOQ_KEY });
    assert.is(await refusal(be.sendRawTransaction(over)), 'tx fee (100.01 ether) exceeds the configured cap (100.00 ether)');
    // eth_sendTransaction / personal_sendTransaction's path too.
    assert.match(await refusal(be.sendTransaction({ from: EWOQ, to: addr(1), gas: 21_000n, gasPrice: 10n ** 16n }, EWOQ_KEY)), /^tx fee \(210\.00 ether\) exceeds the configured cap \(100\.00 ether\)$/);
    // Gossiped, the same tx is admitted: the cap bounds what this node's RPC callers send, as geth's.
    assert.is(hex(await vm.chain.admission.admitGossiped(over)), hex(keccak256(over)));
    // Go's %.2f: every digit of a large float, never an exponent.
    assert.is(goFixed2(1e25), '10000000000000000905969664.00');
    assert.is(goFixed2(0.5), '0.50');
    assert.is(txFeeRefusal(10n ** 20n, 1n, 100), undefined, 'exactly the cap passes');
    assert.is(txFeeRefusal(10n ** 30n, 1n, 0), undefined, '0: no cap');
  } finally {
    await vm.shutdown();
  }
});

test('nonce too high names the checksummed sender, as geth', async () => {
  const vm = await startVM({ opts: { mempool: { maxNonceGap: 4 } } });
  try {
    assert.is(await refusal(vm.backend.sendRawTransaction(signedTx({ nonce: 10n, to: addr(1) }).serialize())), `nonce too high: address ${toChecksumAddress(hex(EWOQ))}, tx: 10 state: 0`);
  } finally {
    await vm.shutdown();
  }
});

test.run();
