/**
 * eth_getProof on a real chain: proofs of a deployed contract (several slots written), an account
 * without storage, an absent account and absent slots, at the latest and at an older block, each
 * checked against the block's stateRoot by a Merkle-Patricia verifier written here (keccak of each
 * node, a walk by the key's nibbles through branch, extension and leaf nodes) and by @ethereumjs/mpt's
 * verifyMerkleProof.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createMPT, verifyMerkleProof } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MapDB } from '@ethereumjs/util';
import { EvmRpcError, type AccountProofView } from '../src/evm-backend.js';
import { proveAccount } from '../src/chain/state/proof.js';
import { EWOQ, RUNTIME, addr, asm, buildAndAccept, hex, signedTx, startVM, word } from './helpers.js';

const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

// ---- An independent verifier: no @ethereumjs/mpt. ----

function nibblesOf(b: Uint8Array): number[] {
  const out: number[] = [];
  for (const x of b) out.push(x >> 4, x & 15);
  return out;
}

const equal = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** A compact (hex-prefix) path: its nibbles and whether it ends a leaf. */
function compactPath(encoded: Uint8Array): { leaf: boolean; path: number[] } {
  const all = nibblesOf(encoded);
  const flag = all[0]!;
  assert.ok(flag <= 3, `bad hex-prefix flag ${flag}`);
  return { leaf: flag >= 2, path: all.slice(flag & 1 ? 1 : 2) };
}

type Decoded = Uint8Array | Decoded[];

/**
 * The value `proof` proves for `key` (hashed by the caller) under `root`, or null for a proof of
 * absence; throws for a proof that does not hold (a node whose keccak is not the reference to it,
 * a path that ends before the key's does, nodes left over).
 */
function verifyProof(root: Uint8Array, key: Uint8Array, proof: readonly Uint8Array[]): Uint8Array | null {
  if (proof.length === 0) {
    if (hex(root) !== EMPTY_TRIE_ROOT) throw new Error('empty proof for a non-empty trie');
    return null;
  }
  const nibbles = nibblesOf(key);
  let pos = 0;
  let used = 0;
  let want: Uint8Array = root;
  const done = (v: Uint8Array | null): Uint8Array | null => {
    if (used !== proof.length) throw new Error(`${proof.length - used} proof nodes left over`);
    return v;
  };
  for (;;) {
    const raw = proof[used++];
    if (raw === undefined) throw new Error('proof ends before the path does');
    if (!equal(keccak_256(raw), want)) throw new Error(`node ${used - 1}'s keccak is not its reference`);
    let node = RLP.decode(raw) as Decoded;
    // Walk this node and the nodes embedded in it (a child under 32 bytes is inline).
    for (;;) {
      assert.ok(Array.isArray(node), 'a trie node is an RLP list');
      let child: Decoded;
      if (node.length === 17) {
        if (pos === nibbles.length) {
          const v = node[16] as Uint8Array;
          return done(v.length === 0 ? null : v);
        }
        child = node[nibbles[pos++]!]!;
      } else if (node.length === 2) {
        const { leaf, path } = compactPath(node[0] as Uint8Array);
        const rest = nibbles.slice(pos, pos + path.length);
        const matches = rest.length === path.length && rest.every((n, i) => n === path[i]);
        if (leaf) return done(matches && pos + path.length === nibbles.length ? (node[1] as Uint8Array) : null);
        if (!matches) return done(null);
        pos += path.length;
        child = node[1]!;
      } else {
        throw new Error(`a trie node of ${node.length} items`);
      }
      if (Array.isArray(child)) {
        node = child;
        continue;
      }
      if (child.length === 0) return done(null);
      assert.is(child.length, 32, 'a child reference is a 32-byte hash or an embedded node');
      want = child;
      break;
    }
  }
}

const big = (b: Uint8Array): bigint => (b.length === 0 ? 0n : BigInt(hex(b)));

/** Checks `p` (for `address` at `stateRoot`) both ways; the account's fields, or null when absent. */
async function checkProof(stateRoot: Uint8Array, address: Uint8Array, slots: readonly Uint8Array[], p: AccountProofView): Promise<bigint[] | null> {
  const leaf = verifyProof(stateRoot, keccak_256(address), p.accountProof);
  const theirs = await verifyMerkleProof(address, [...p.accountProof], { root: stateRoot, useKeyHashing: true });
  assert.equal(theirs === null ? null : hex(theirs), leaf === null ? null : hex(leaf), '@ethereumjs/mpt agrees on the account');
  assert.is(p.storageProof.length, slots.length);
  if (leaf === null) {
    assert.is(p.balance, 0n);
    assert.is(p.nonce, 0n);
    assert.is(hex(p.codeHash), EMPTY_CODE_HASH);
    assert.is(hex(p.storageHash), EMPTY_TRIE_ROOT);
    for (const s of p.storageProof) assert.equal([s.value, s.proof.length], [0n, 0]);
    return null;
  }
  const [nonce, balance, storageRoot, codeHash] = RLP.decode(leaf) as Uint8Array[];
  assert.is(big(nonce!), p.nonce, 'nonce in the leaf');
  assert.is(big(balance!), p.balance, 'balance in the leaf');
  assert.is(hex(storageRoot!), hex(p.storageHash), 'storage root in the leaf');
  assert.is(hex(codeHash!), hex(p.codeHash), 'code hash in the leaf');
  const values: bigint[] = [];
  for (let i = 0; i < slots.length; i++) {
    const s = p.storageProof[i]!;
    const v = verifyProof(p.storageHash, keccak_256(slots[i]!), s.proof);
    const value = v === null ? 0n : big(RLP.decode(v) as Uint8Array);
    assert.is(value, s.value, `slot ${hex(slots[i]!)}'s value`);
    // An empty storage trie's proofs are empty (as geth's): @ethereumjs/mpt's verifier needs a node
    // to start from, and the verifier above has checked the root is the empty trie's.
    if (s.proof.length > 0) {
      const mine = await verifyMerkleProof(slots[i]!, [...s.proof], { root: p.storageHash, useKeyHashing: true });
      assert.equal(mine === null ? 0n : big(RLP.decode(mine) as Uint8Array), value, '@ethereumjs/mpt agrees on the slot');
    }
    values.push(value);
  }
  return values;
}

// ---- The chain. ----

const MAX = (1n << 256n) - 1n;
const BIG_KEY = word(0xdeadbeefn << 200n);
const MAP_KEY = keccak_256(new Uint8Array(64));
/** Slots the constructor writes, with their values; then slot 0 is overwritten by a call. */
const WRITES: Array<[Uint8Array, bigint]> = [
  [word(0n), 0x11n],
  [word(1n), 0x2an],
  [word(2n), MAX],
  [word(3n), 3n],
  [BIG_KEY, 7n],
  [MAP_KEY, 0x1234_5678n],
];

/** Init code: SSTOREs each of WRITES, then returns RUNTIME (slot 0 is set by calls with a word). */
function initCode(): Uint8Array {
  const even = (h: string) => (h.length % 2 ? '0' + h : h);
  const stores = WRITES.map(([k, v]) => `0x${even(v.toString(16))} ${hex(k)} SSTORE`).join(' ');
  const len = RUNTIME.length.toString(16).padStart(2, '0');
  const tail = (off: number) => `0x${len} 0x${off.toString(16).padStart(4, '0')} PUSH0 CODECOPY 0x${len} PUSH0 RETURN`;
  const headLength = asm(`${stores} ${tail(0)}`).length;
  const head = asm(`${stores} ${tail(headLength)}`);
  return Uint8Array.from([...head, ...RUNTIME]);
}

const ASKED = [...WRITES.map(([k]) => k), word(9n), word(0xabcdefn << 100n)];

test('eth_getProof on a real chain: a contract with slots, an EOA, an absent account and absent slots, now and at an older block', async () => {
  const vm = await startVM();
  try {
    const deploy = signedTx({ nonce: 0n, data: initCode(), gas: 600_000n });
    await vm.backend.sendRawTransaction(deploy.serialize());
    await vm.backend.sendRawTransaction(signedTx({ nonce: 1n, to: addr(3), value: 5n }).serialize());
    await buildAndAccept(vm);
    const receipt = (await vm.backend.receipt(deploy.hash()))!;
    assert.is(receipt.status, 1);
    const contract = receipt.contractAddress!;
    await vm.backend.sendRawTransaction(signedTx({ nonce: 2n, to: contract, data: word(0x99n), gas: 100_000n }).serialize());
    await buildAndAccept(vm);

    const at1 = (await vm.backend.block(1n))!.header.stateRoot;
    const at2 = (await vm.backend.block('latest'))!.header.stateRoot;
    assert.not.equal(hex(at1), hex(at2));

    // The contract, at the older block (the constructor's writes) and now (slot 0 overwritten).
    const then = await vm.backend.proof(contract, ASKED, 1n);
    const expected1 = [...WRITES.map(([, v]) => v), 0n, 0n];
    assert.equal(await checkProof(at1, contract, ASKED, then), expected1);
    assert.is(then.nonce, 1n);
    assert.is(hex(then.codeHash), hex(keccak_256(RUNTIME)));
    assert.ok(then.storageProof.every((s, i) => i >= WRITES.length || s.proof.length > 0), 'absent slots have exclusion proofs');
    const now = await vm.backend.proof(contract, ASKED, 'latest');
    assert.equal(await checkProof(at2, contract, ASKED, now), [0x99n, ...expected1.slice(1)]);
    assert.not.equal(hex(now.storageHash), hex(then.storageHash));
    // By hash as well as by number.
    const byHash = await vm.backend.proof(contract, ASKED, { hash: (await vm.backend.block(1n))!.header.hash });
    assert.equal(byHash.accountProof.map(hex), then.accountProof.map(hex));

    // An EOA (no storage): its slots have empty proofs under the empty trie root.
    const eoa = await vm.backend.proof(EWOQ, [word(0n)], 'latest');
    assert.equal(await checkProof(at2, EWOQ, [word(0n)], eoa), [0n]);
    assert.is(hex(eoa.storageHash), EMPTY_TRIE_ROOT);
    assert.is(hex(eoa.codeHash), EMPTY_CODE_HASH);
    assert.is(eoa.nonce, 3n);
    assert.is(eoa.storageProof[0]!.proof.length, 0);
    assert.is((await vm.backend.proof(addr(3), [], 'latest')).balance, 5n);

    // An absent account: the proof of its absence, coreth's empty fields.
    const absent = await vm.backend.proof(addr(99), [word(0n), word(1n)], 'latest');
    assert.is(await checkProof(at2, addr(99), [word(0n), word(1n)], absent), null);
    assert.ok(absent.accountProof.length > 0);
    // addr(3) did not exist at genesis.
    assert.is(await checkProof((await vm.backend.block(0n))!.header.stateRoot, addr(3), [], await vm.backend.proof(addr(3), [], 0n)), null);
  } finally {
    await vm.shutdown();
  }
});

test('the independent verifier refuses a tampered proof, a proof cut short and one under another root', async () => {
  const vm = await startVM();
  try {
    await vm.backend.sendRawTransaction(signedTx({ nonce: 0n, to: addr(3), value: 5n }).serialize());
    await buildAndAccept(vm);
    const root = (await vm.backend.block('latest'))!.header.stateRoot;
    const p = await vm.backend.proof(EWOQ, [], 'latest');
    assert.ok(verifyProof(root, keccak_256(EWOQ), p.accountProof) !== null);
    const tampered = p.accountProof.map((n) => n.slice());
    tampered[tampered.length - 1]![40]! ^= 1;
    assert.throws(() => verifyProof(root, keccak_256(EWOQ), tampered), /keccak is not its reference/);
    if (p.accountProof.length > 1) assert.throws(() => verifyProof(root, keccak_256(EWOQ), p.accountProof.slice(0, -1)), /ends before the path/);
    const genesisRoot = (await vm.backend.block(0n))!.header.stateRoot;
    assert.throws(() => verifyProof(genesisRoot, keccak_256(EWOQ), p.accountProof), /keccak is not its reference/);
  } finally {
    await vm.shutdown();
  }
});

test('eth_getProof of a block the node does not have: eth_getBalance\'s errors', async () => {
  const vm = await startVM();
  try {
    for (const ref of [7n, { hash: new Uint8Array(32).fill(0x99) }] as const) {
      const balanceErr = await vm.backend.balance(EWOQ, ref).then(
        () => undefined,
        (e: unknown) => e,
      );
      const proofErr = await vm.backend.proof(EWOQ, [], ref).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(proofErr instanceof EvmRpcError);
      assert.ok(balanceErr instanceof EvmRpcError);
      assert.equal([proofErr.rpcCode, proofErr.message], [balanceErr.rpcCode, balanceErr.message]);
    }
  } finally {
    await vm.shutdown();
  }
});

test('a state whose nodes the store lacks is an error, not a proof cut short', async () => {
  const trie = await createMPT({ db: new MapDB(), useKeyHashing: true, root: keccak_256(Uint8Array.of(1)) });
  const err = await proveAccount(trie, EWOQ, []).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof EvmRpcError);
  assert.is(err.rpcCode, -32000);
  assert.match(err.message, /^missing trie node/);
});

test('a stopped request stops between slots with the signal\'s reason', async () => {
  const vm = await startVM();
  try {
    const reason = new EvmRpcError(-32002, 'request timed out');
    let looks = 0;
    const signal = {
      get aborted() {
        return ++looks > 2;
      },
      reason,
      addEventListener() {},
      removeEventListener() {},
    };
    const err = await vm.backend.proof(EWOQ, [word(0n), word(1n), word(2n), word(3n)], 'latest', signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.is(err, reason);
    assert.is(looks, 3, 'stopped at the second slot');
  } finally {
    await vm.shutdown();
  }
});

test.run();
