/**
 * The platform chain through real HTTP on a node started as `npm start` does: a user, the ewoq
 * account, a 2-of-3 subnet, this node as its validator (waiting in real time for its start), a
 * timestamp chain, the example kv VM (from a plugin dir) and another asset VM instance created on the subnet, each serving its
 * API at /ext/bc/<id> — and all of it back after a restart.
 */
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ShortId, cb58Encode, vmIdFromName } from '@cornice/sdk';
import { NODE1_ID, REPO, npmStartFlags } from '../src/fixtures.js';
import { startNodeProcess, type NodeProcess } from '../src/process.js';
import { EWOQ_P_KEY, ok, until } from '../src/subnet.js';

const EWOQ = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';
const USER = { username: 'alice', password: 'a Strong passw0rd!' };
const KV_VM_ID = vmIdFromName('kvvm').toString();
const EWOQ_EVM = '0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc';

let dir: string;
let plugins: string;
test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-e2e-platform-'));
  plugins = join(dir, 'plugins');
  await mkdir(plugins);
  await symlink(join(REPO, 'examples/custom-vm'), join(plugins, KV_VM_ID));
});
test.after(() => rm(dir, { recursive: true, force: true }));

/** Signs with each signer in turn (control keys first, then the payer) and issues; the tx ID. */
async function signAndIssue(node: NodeProcess, unsignedTx: string, signers: string[]): Promise<string> {
  let tx = unsignedTx;
  for (const signer of signers) tx = (await ok(node, 'P', 'platform.sign', { tx, signer, ...USER })).tx;
  return (await ok(node, 'P', 'platform.issueTx', { tx })).txID;
}

async function nonceOf(node: NodeProcess, address: string): Promise<number> {
  return Number((await ok(node, 'P', 'platform.getAccount', { address })).nonce);
}

test('createUser -> subnet (2-of-3) -> this node validates it -> createBlockchain (timestamp, kv) -> served at /ext/bc/<id>; back after restart', async () => {
  const flags = [...npmStartFlags(), `--data-dir=${dir}/node`, `--plugin-dir=${plugins}`];
  let node = await startNodeProcess(flags);
  const flowStarted = Date.now();
  let tsChain: string;
  let kvChain: string;
  let avmChain: string;
  let evmChain: string;
  try {
    assert.is(node.nodeId, NODE1_ID);
    await ok(node, 'keystore', 'keystore.createUser', USER);
    const payer = (await ok(node, 'P', 'platform.createAccount', { ...USER, privateKey: EWOQ_P_KEY })).address;
    assert.is(payer, EWOQ);
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push((await ok(node, 'P', 'platform.createAccount', USER)).address);

    // Subnet: 2-of-3 control keys; the builder sorts them.
    const { unsignedTx: subnetTx } = await ok(node, 'P', 'platform.createSubnet', { controlKeys: keys, threshold: 2, payerNonce: 1 });
    const subnetId = await signAndIssue(node, subnetTx, [payer]);
    const subnet = await until('the subnet', async () => {
      const r = await ok(node, 'P', 'platform.getSubnets', {});
      return r.subnets.find((s: { id: string }) => s.id === subnetId);
    });
    // The same keys, in byte order (not cb58 text order).
    assert.equal([...subnet.controlKeys].sort(), [...keys].sort());
    const bytes = subnet.controlKeys.map((k: string) => ShortId.fromString(k));
    for (let i = 1; i < bytes.length; i++) assert.ok(bytes[i - 1].compare(bytes[i]) < 0, 'control keys sorted by bytes');
    assert.is(subnet.threshold, '2');

    // This node validates the subnet from a few seconds from now.
    const startTime = Math.floor(Date.now() / 1000) + 12;
    const endTime = startTime + 2 * 24 * 3600;
    const { unsignedTx: addTx } = await ok(node, 'P', 'platform.addNonDefaultSubnetValidator', {
      id: node.nodeId,
      subnetID: subnetId,
      startTime,
      endTime,
      weight: 1,
      payerNonce: (await nonceOf(node, payer)) + 1,
    });
    await signAndIssue(node, addTx, [keys[0]!, keys[2]!, payer]);
    await until('the pending validator', async () => {
      const r = await ok(node, 'P', 'platform.getPendingValidators', { subnetID: subnetId });
      return r.validators.find((v: { id: string }) => v.id === node.nodeId);
    });
    const current = await until('the validator to become current', async () => {
      const r = await ok(node, 'P', 'platform.getCurrentValidators', { subnetID: subnetId });
      return r.validators.find((v: { id: string }) => v.id === node.nodeId);
    });
    assert.is(String(current.weight), '1');

    // A timestamp chain on the subnet, its subnet spelled SubnetID, as the reference's API examples spell it.
    const genesisData = cb58Encode(new TextEncoder().encode('hello subnet'));
    const { unsignedTx: chainTx } = await ok(node, 'P', 'platform.createBlockchain', {
      SubnetID: subnetId,
      vmID: 'timestamp',
      name: 'my timestamps',
      payerNonce: (await nonceOf(node, payer)) + 1,
      genesisData,
    });
    tsChain = await signAndIssue(node, chainTx, [keys[1]!, keys[0]!, payer]);
    const seen: string[] = [];
    await until('the chain to be validated', async () => {
      const { status } = await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: tsChain });
      if (seen.at(-1) !== status) seen.push(status);
      return status === 'Validating' ? status : undefined;
    });
    const order = ['Unknown', 'Preferred', 'Created', 'Validating'];
    assert.equal(seen, [...seen].sort((a, b) => order.indexOf(a) - order.indexOf(b)), `statuses in order: ${seen}`);
    const genesisBlock = await ok(node, `bc/${tsChain}`, 'timestamp.getBlock', {});
    assert.is(genesisBlock.parentID, '11111111111111111111111111111111LpoYY');
    assert.equal((await ok(node, 'admin', 'admin.aliasChain', { chain: tsChain, alias: 'mytime' })), { success: true });
    assert.is((await ok(node, 'bc/mytime', 'timestamp.getBlock', {})).id, genesisBlock.id);
    const chains = (await ok(node, 'P', 'platform.getBlockchains', {})).blockchains;
    assert.ok(chains.some((c: { id: string; subnetID: string }) => c.id === tsChain && c.subnetID === subnetId));
    assert.equal((await ok(node, 'P', 'platform.validatedBy', { blockchainID: tsChain })), { subnetID: subnetId });

    // A third-party VM (the example kv VM from the plugin dir) on the same subnet.
    const { unsignedTx: kvTx } = await ok(node, 'P', 'platform.createBlockchain', {
      subnetID: subnetId,
      vmID: 'kvvm',
      name: 'kv store',
      payerNonce: (await nonceOf(node, payer)) + 1,
      genesisData: cb58Encode(new Uint8Array()),
    });
    kvChain = await signAndIssue(node, kvTx, [keys[0]!, keys[1]!, payer]);
    await until('the kv chain', async () => ((await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: kvChain })).status === 'Validating' ? true : undefined));
    assert.equal(await ok(node, `bc/${kvChain}`, 'kv.put', { key: 'colour', value: 'blue' }), { success: true });
    await until('the kv write', async () => {
      const r = await node.call(`bc/${kvChain}`, 'kv.get', { key: 'colour' });
      return r.result?.value === 'blue' ? true : undefined;
    });

    // Another asset VM instance on the subnet, from avm.buildGenesis: the same API, `<chainID>-` addresses.
    const { bytes: avmGenesis } = await ok(node, 'vm/avm', 'avm.buildGenesis', {
      genesisData: { SUB: { name: 'Subnet token', symbol: 'SUB', denomination: 0, initialState: { fixedCap: [{ amount: 1000, address: EWOQ }] } } },
    });
    const { unsignedTx: avmTx } = await ok(node, 'P', 'platform.createBlockchain', {
      subnetID: subnetId,
      vmID: 'avm',
      name: 'subnet assets',
      payerNonce: (await nonceOf(node, payer)) + 1,
      genesisData: avmGenesis,
    });
    avmChain = await signAndIssue(node, avmTx, [keys[2]!, keys[1]!, payer]);
    await until('the avm chain', async () => ((await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: avmChain })).status === 'Validating' ? true : undefined));
    const mine = (await ok(node, `bc/${avmChain}`, 'avm.importKey', { ...USER, privateKey: EWOQ_P_KEY })).address;
    assert.is(mine, `${avmChain}-${EWOQ}`);
    assert.is((await ok(node, `bc/${avmChain}`, 'avm.getBalance', { address: mine, assetID: 'SUB' })).balance, '1000');
    const wrong = await node.call(`bc/${avmChain}`, 'avm.getBalance', { address: `X-${EWOQ}`, assetID: 'SUB' });
    assert.match(wrong.error!.message, /wrong blockchain ID/);

    // An EVM instance on the subnet (coreth-style JSON genesis): the Ethereum JSON-RPC at
    // /ext/bc/<id>/rpc, and under a chain alias.
    const evmGenesis = {
      config: { chainId: 99999, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, shanghaiTime: 0, cancunTime: 0 },
      alloc: { [EWOQ_EVM]: { balance: '0x1000' } },
      gasLimit: '0x7a1200',
      difficulty: '0x0',
    };
    const { unsignedTx: evmTx } = await ok(node, 'P', 'platform.createBlockchain', {
      subnetID: subnetId,
      vmID: 'evm',
      name: 'subnet evm',
      payerNonce: (await nonceOf(node, payer)) + 1,
      genesisData: cb58Encode(new TextEncoder().encode(JSON.stringify(evmGenesis))),
    });
    evmChain = await signAndIssue(node, evmTx, [keys[0]!, keys[2]!, payer]);
    await until('the evm chain', async () => ((await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: evmChain })).status === 'Validating' ? true : undefined));
    assert.is(await ok(node, `bc/${evmChain}/rpc`, 'eth_chainId', []), '0x1869f');
    assert.is(await ok(node, `bc/${evmChain}/rpc`, 'eth_getBalance', [EWOQ_EVM, 'latest']), '0x1000');
    assert.equal(await ok(node, 'admin', 'admin.aliasChain', { chain: evmChain, alias: 'myevm' }), { success: true });
    assert.is(await ok(node, 'bc/myevm/rpc', 'eth_chainId', []), '0x1869f');
    console.log(JSON.stringify({ flow: 'subnet+blockchains', ms: Date.now() - flowStarted }));
  } finally {
    await node.stop();
  }

  node = await startNodeProcess(flags);
  try {
    assert.is((await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: tsChain })).status, 'Validating');
    assert.ok((await ok(node, `bc/${tsChain}`, 'timestamp.getBlock', {})).id);
    assert.is((await ok(node, `bc/${kvChain}`, 'kv.get', { key: 'colour' })).value, 'blue');
    assert.is(await nonceOf(node, EWOQ), 6);
    assert.is(await ok(node, `bc/${evmChain}/rpc`, 'eth_getBalance', [EWOQ_EVM, 'latest']), '0x1000');
    assert.is((await ok(node, `bc/${avmChain}`, 'avm.getBalance', { address: `${avmChain}-${EWOQ}`, assetID: 'SUB' })).balance, '1000');
  } finally {
    await node.stop();
  }
});

test('unknown vmID: a clear error naming it and the loaded VMs; the Default Subnet is refused', async () => {
  const node = await startNodeProcess([...npmStartFlags(), `--data-dir=${dir}/errors`, '--db-type=memory']);
  try {
    const r = await node.call('P', 'platform.createBlockchain', { subnetID: '2bRCr6B4MiEfSjidDwxDpdCyviwnfUVqB2HGwhm947w9YYqb7r', vmID: 'nosuchvm', name: 'x', payerNonce: 1, genesisData: cb58Encode(new Uint8Array()) });
    assert.ok(r.error);
    assert.match(r.error.message, /nosuchvm/);
    assert.match(r.error.message, /timestamp/);
    const d = await node.call('P', 'platform.createBlockchain', { subnetID: '11111111111111111111111111111111LpoYY', vmID: 'timestamp', name: 'x', payerNonce: 1, genesisData: cb58Encode(new Uint8Array()) });
    assert.match(d.error!.message, /new blockchain can't be validated by default Subnet/);
    // The VM checks the genesis before the tx is built: an EVM genesis without a chain ID.
    const g = await node.call('P', 'platform.createBlockchain', { subnetID: '2bRCr6B4MiEfSjidDwxDpdCyviwnfUVqB2HGwhm947w9YYqb7r', vmID: 'evm', name: 'x', payerNonce: 1, genesisData: cb58Encode(new TextEncoder().encode('{"config":{},"alloc":{}}')) });
    assert.is(g.error?.code, -32602);
    assert.match(g.error!.message, /^genesisData: not valid genesis data for this VM: invalid genesis: config.chainId/);
  } finally {
    await node.stop();
  }
});

test.run();
