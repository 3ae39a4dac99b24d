/**
 * eth_getProof (EIP-1186) through a real node, as a light client uses it: the ERC-20's account and
 * balance slots proven against eth_getBlockByNumber(...).stateRoot with a verifier on ethers' keccak
 * and RLP (test/src/merkle-proof.ts), now and at an older block; an absent account and slot; the same
 * proof through viem's getProof. Cornice only (hardhat's node is the reference for other files).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AbiCoder, type Contract, ContractFactory, JsonRpcProvider, Wallet, decodeRlp, keccak256, toQuantity, zeroPadValue } from 'ethers';
import { createPublicClient, http, type Address } from 'viem';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, setupReporting, startEvmTarget, type EvmTarget } from '../src/evm.js';
import { EMPTY_TRIE_ROOT, verifyMerkleProof } from '../src/merkle-proof.js';
import { compileToken } from '../src/solidity.js';

interface ProofReply {
  address: string;
  accountProof: string[];
  balance: string;
  codeHash: string;
  nonce: string;
  storageHash: string;
  storageProof: Array<{ key: string; value: string; proof: string[] }>;
}

let dir: string;
let target: EvmTarget;
let provider: JsonRpcProvider;
let token: Contract;
let tokenAddress: string;
let deployedAt: number;
let transferredAt: number;
const other = Wallet.createRandom().address;
const SUPPLY = 1_000_000n * 10n ** 18n;

/** The slot of `balanceOf[holder]` (the token's mapping at slot 1). */
const balanceSlot = (holder: string): string => keccak256(AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [holder, 1]));

const cornice = (): boolean => target.kind === 'cornice';

test.before(
  setupReporting(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-evm-proof-'));
    const compiled = compileToken();
    target = await startEvmTarget({ dataDir: dir, dbType: 'memory' });
    if (!cornice()) return;
    provider = new JsonRpcProvider(target.rpcUrl, undefined, { pollingInterval: 100, cacheTimeout: -1 });
    const wallet = new Wallet(EWOQ_EVM_KEY, provider);
    const deployed = await new ContractFactory(compiled.abi, compiled.bytecode, wallet).deploy(SUPPLY);
    const receipt = (await deployed.deploymentTransaction()!.wait())!;
    token = deployed as Contract;
    tokenAddress = (await deployed.getAddress()).toLowerCase();
    deployedAt = receipt.blockNumber;
    const sent = await (await token.getFunction('transfer')(other, 1234n)).wait();
    transferredAt = sent.blockNumber;
  }),
);

test.after(async () => {
  provider?.destroy();
  await target?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** eth_getProof at `block` checked against that block's stateRoot; the proven slot values. */
async function provenAt(address: string, keys: string[], block: number): Promise<{ reply: ProofReply; values: bigint[]; account: string[] | null }> {
  const tag = toQuantity(block);
  const reply = (await provider.send('eth_getProof', [address, keys, tag])) as ProofReply;
  const { stateRoot } = await provider.send('eth_getBlockByNumber', [tag, false]);
  assert.is(reply.address, address.toLowerCase());
  const leaf = verifyMerkleProof(stateRoot, address, reply.accountProof);
  const account = leaf === null ? null : (decodeRlp(leaf) as string[]);
  if (account) {
    const [nonce, balance, storageRoot, codeHash] = account;
    assert.is(BigInt(nonce === '0x' ? 0 : nonce!), BigInt(reply.nonce), 'nonce in the leaf');
    assert.is(BigInt(balance === '0x' ? 0 : balance!), BigInt(reply.balance), 'balance in the leaf');
    assert.is(storageRoot, reply.storageHash, 'storage root in the leaf');
    assert.is(codeHash, reply.codeHash, 'code hash in the leaf');
  }
  const values = reply.storageProof.map((s, i) => {
    assert.is(s.key, keys[i]!.toLowerCase(), 'a 32-byte key is echoed');
    const v = verifyMerkleProof(reply.storageHash, zeroPadValue(keys[i]!, 32), s.proof);
    const value = v === null ? 0n : BigInt(decodeRlp(v) as string);
    assert.is(value, BigInt(s.value), 'the proven value is the one reported');
    return value;
  });
  return { reply, values, account };
}

test('the token\'s balances proven against the block\'s stateRoot, before and after a transfer', async () => {
  if (!cornice()) return;
  const keys = [zeroPadValue('0x00', 32), balanceSlot(EWOQ_EVM_ADDRESS), balanceSlot(other), zeroPadValue('0x07', 32)];
  const before = await provenAt(tokenAddress, keys, deployedAt);
  assert.equal(before.values, [SUPPLY, SUPPLY, 0n, 0n], 'totalSupply, the deployer\'s balance, none yet, an unused slot');
  assert.ok(before.reply.storageProof[2]!.proof.length > 0, 'an absent slot has its exclusion proof');
  const after = await provenAt(tokenAddress, keys, transferredAt);
  assert.equal(after.values, [SUPPLY, SUPPLY - 1234n, 1234n, 0n]);
  assert.is(after.reply.codeHash, keccak256(await provider.getCode(tokenAddress)));
  assert.not.equal(after.reply.storageHash, before.reply.storageHash);
  // The sender's account: nonce and balance as eth_getTransactionCount and eth_getBalance say.
  const ewoq = await provenAt(EWOQ_EVM_ADDRESS, [], transferredAt);
  assert.is(BigInt(ewoq.reply.nonce), BigInt(await provider.getTransactionCount(EWOQ_EVM_ADDRESS, transferredAt)));
  assert.is(BigInt(ewoq.reply.balance), await provider.getBalance(EWOQ_EVM_ADDRESS, transferredAt));
  assert.is(ewoq.reply.storageHash, EMPTY_TRIE_ROOT);
});

test('an absent account: its exclusion proof, zero fields, empty-trie storage', async () => {
  if (!cornice()) return;
  const nobody = Wallet.createRandom().address;
  const { reply, account, values } = await provenAt(nobody, [zeroPadValue('0x01', 32)], transferredAt);
  assert.is(account, null);
  assert.ok(reply.accountProof.length > 0);
  assert.equal([reply.balance, reply.nonce, reply.storageHash], ['0x0', '0x0', EMPTY_TRIE_ROOT]);
  assert.is(reply.codeHash, keccak256('0x'));
  assert.equal(values, [0n]);
  assert.equal(reply.storageProof[0]!.proof, []);
});

test('viem\'s getProof reads the same proof', async () => {
  if (!cornice()) return;
  const pub = createPublicClient({ transport: http(target.rpcUrl) });
  const slot = balanceSlot(other) as `0x${string}`;
  const proof = await pub.getProof({ address: tokenAddress as Address, storageKeys: [slot], blockNumber: BigInt(transferredAt) });
  const raw = (await provider.send('eth_getProof', [tokenAddress, [slot], toQuantity(transferredAt)])) as ProofReply;
  assert.equal(proof.accountProof, raw.accountProof);
  assert.is(proof.storageHash, raw.storageHash);
  assert.is(proof.storageProof[0]!.value, 1234n);
  assert.equal(proof.storageProof[0]!.proof, raw.storageProof[0]!.proof);
});

test('bad input through the node: -32602 naming the argument', async () => {
  if (!cornice()) return;
  const tooLong = await target.call('eth_getProof', [tokenAddress, ['0x' + '11'.repeat(33)], 'latest']);
  assert.equal(tooLong.error, { code: -32602, message: 'invalid argument 1: storage key 0: hex string too long, want at most 32 bytes' });
  const tooMany = await target.call('eth_getProof', [tokenAddress, Array(1025).fill('0x01'), 'latest']);
  assert.equal(tooMany.error, { code: -32602, message: 'invalid argument 1: too many storage keys (1025): at most 1024 per request' });
  const unknown = await target.call('eth_getProof', [tokenAddress, [], { blockHash: '0x' + '99'.repeat(32) }]);
  assert.equal(unknown.error, { code: -32000, message: 'header for hash not found' });
});

test.run();
