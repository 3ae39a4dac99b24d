// Platform chain on one node (`npm start` settings, LevelDB):
// 1. signed createSubnet txs accepted/s: N txs from 16 fresh accounts (each its nonces 1..N/16 in
//    order), signed here with the codec, issued with platform.issueTx, the 16 senders at once; the
//    clock stops when every sender's nonce on the accepted state is its last. The issue-only rate of the same txs is printed beside it.
// 2. the whole subnet + blockchain flow of the README (createSubnet 2-of-3, this node as its
//    validator from ~12 s ahead, createBlockchain of a timestamp VM, until its API answers), in ms;
//    most of it is the wait for the validator's start time, printed apart.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrivateKey, cb58Encode } from '@cornice/sdk';
import { report, rpc, startNode } from './lib.mjs';

const codec = await import(new URL('../core/dist/src/platform/codec.js', import.meta.url).href);
const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
const EWOQ = PrivateKey.fromString('ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN');
const USER = { username: 'bench', password: 'a Strong passw0rd!' };

async function call(url, method, params) {
  const r = await rpc(url, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

// fetch costs the client ~1.5 ms a call here, as much as the node's work: the issuing loop posts
// over node:http keep-alive connections instead, so the figure is the node's.
const agent = new Agent({ keepAlive: true, maxSockets: 16 });
function post(url, method, params) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const r = JSON.parse(text);
        if (r.error) reject(new Error(`${method}: ${JSON.stringify(r.error)}`));
        else resolve(r.result);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function until(read, maxMs = 120_000) {
  const t0 = Date.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() - t0 > maxMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function benchPlatform({ txs = 300, baselineBareNodeHttp } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-p-'));
  const node = await startNode([
    `--data-dir=${dir}`,
    `--staking-tls-cert-file=${fixture('staker1.crt')}`,
    `--staking-tls-key-file=${fixture('staker1.key')}`,
    '--sybil-protection-enabled=false',
  ]);
  const P = `${node.url}/ext/P`;
  const nodeId = (await call(`${node.url}/ext/admin`, 'admin.getNodeID', {})).nodeID;
  try {
    const account = async (address = EWOQ.address.toString()) => call(P, 'platform.getAccount', { address });
    // createSubnet costs nothing (fee 0), so any key can issue them: 16 fresh keys, each issuing its
    // own nonces in order (a node refuses a nonce ahead of the account's next), all 16 at once.
    const signedSubnet = (key, nonce) => {
      const tx = { kind: 'createSubnet', networkId: 12345, nonce: BigInt(nonce), controlKeys: [key.address], threshold: 1, sig: new Uint8Array(65) };
      return cb58Encode(codec.encodeTx({ ...tx, sig: key.sign(codec.unsignedTxBytes(tx)) }));
    };
    const senders = Array.from({ length: 16 }, () => PrivateKey.generate());
    const perSender = Math.ceil(txs / senders.length);
    const signedTxs = senders.map((key) => Array.from({ length: perSender }, (_, i) => signedSubnet(key, i + 1)));
    const t0 = performance.now();
    await Promise.all(signedTxs.map(async (list) => {
      for (const tx of list) await post(P, 'platform.issueTx', { tx });
    }));
    const issuedMs = performance.now() - t0;
    await until(async () => {
      const nonces = await Promise.all(senders.map(async (k) => Number((await account(k.address.toString())).nonce)));
      return nonces.every((n) => n >= perSender) ? true : undefined;
    });
    const ms = performance.now() - t0;
    txs = perSender * senders.length;
    report({
      bench: 'platform createSubnet txs accepted/s (one node, signed, 16 senders issuing at once)',
      value: Math.round((txs / ms) * 1000),
      unit: 'tx/s',
      issueOnlyPerSecond: Math.round((txs / issuedMs) * 1000),
      baselineBareNodeHttp,
      txs,
    });

    // The README flow.
    const f0 = performance.now();
    await call(`${node.url}/ext/keystore`, 'keystore.createUser', USER);
    const payer = (await call(P, 'platform.createAccount', { ...USER, privateKey: EWOQ.toCb58() })).address;
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await call(P, 'platform.createAccount', USER)).address);
    const nonce = async () => Number((await account()).nonce) + 1;
    const signAndIssue = async (tx, signers) => {
      for (const signer of signers) tx = (await call(P, 'platform.sign', { tx, signer, ...USER })).tx;
      return (await call(P, 'platform.issueTx', { tx })).txID;
    };
    const subnetID = await signAndIssue((await call(P, 'platform.createSubnet', { controlKeys: keys, threshold: 2, payerNonce: await nonce() })).unsignedTx, [payer]);
    await until(async () => ((await call(P, 'platform.getSubnets', { ids: [subnetID] })).subnets?.length ? true : undefined));
    const startTime = Math.floor(Date.now() / 1000) + 12;
    const add = await call(P, 'platform.addNonDefaultSubnetValidator', { id: nodeId, subnetID, startTime, endTime: startTime + 2 * 86400, weight: 1, payerNonce: await nonce() });
    await signAndIssue(add.unsignedTx, [keys[0], keys[1], payer]);
    const w0 = performance.now();
    await until(async () => ((await call(P, 'platform.getCurrentValidators', { subnetID })).validators.length ? true : undefined));
    const waitedMs = performance.now() - w0;
    const create = await call(P, 'platform.createBlockchain', { subnetID, vmID: 'timestamp', name: 'bench', payerNonce: await nonce(), genesisData: cb58Encode(new Uint8Array()) });
    const chainId = await signAndIssue(create.unsignedTx, [keys[0], keys[1], payer]);
    await until(async () => ((await rpc(`${node.url}/ext/bc/${chainId}`, 'timestamp.getBlock', {})).result ? true : undefined));
    const flowMs = performance.now() - f0;
    report({
      bench: 'subnet + blockchain flow (createSubnet, validator from +12 s, createBlockchain, API answers)',
      value: Math.round(flowMs),
      unit: 'ms',
      waitingForStartTimeMs: Math.round(waitedMs),
      withoutTheWaitMs: Math.round(flowMs - waitedMs),
    });
  } finally {
    agent.destroy();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
