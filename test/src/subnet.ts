/**
 * The platform chain's subnet flow through a node's API, as a user does it: a keystore user holding
 * the ewoq account, a 1-of-1 subnet, this node as its validator (its start a few seconds ahead, waited
 * for in real time), then chains created on it by vmID with a genesis.
 */
import { Id, cb58Decode, cb58Encode, sha256 } from '@cornice/sdk';
import type { NodeProcess } from './process.js';

export const EWOQ_P_KEY = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
const USER = { username: 'subnet-owner', password: 'a Strong passw0rd!' };

export async function ok(node: NodeProcess, path: string, method: string, params: unknown = {}): Promise<any> {
  const r = await node.call(path, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** Polls `read` every 100 ms until it answers something, for at most `maxMs`. */
export async function until<T>(what: string, read: () => Promise<T | undefined>, maxMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() - started > maxMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Subnet {
  readonly id: string;
  /**
   * Issues a createBlockchain of `vmID` with `genesis` (bytes, or JSON made into bytes); resolves with
   * the chain ID once the tx is issued (before the chain runs: see `untilValidating`). `beforeIssue`
   * gets the chain ID first (a user writes the chain's config files then: `<chain-config-dir>/<id>/`).
   */
  issueChain(vmID: string, name: string, genesis: Uint8Array | object, beforeIssue?: (chainId: string) => Promise<void>): Promise<string>;
  /** Waits for the chain to be Validating (it runs on this node). */
  untilValidating(chainId: string): Promise<void>;
}

/** Creates a 1-of-1 subnet validated by `node` (takes ~15 s: the validator's start is in the future). */
export async function openSubnet(node: NodeProcess): Promise<Subnet> {
  await ok(node, 'keystore', 'keystore.createUser', USER);
  const payer = (await ok(node, 'P', 'platform.createAccount', { ...USER, privateKey: EWOQ_P_KEY })).address;
  const control = (await ok(node, 'P', 'platform.createAccount', USER)).address;
  const nonce = async () => Number((await ok(node, 'P', 'platform.getAccount', { address: payer })).nonce) + 1;
  const signAndIssue = async (unsignedTx: string, signers: string[], beforeIssue?: (txId: string) => Promise<void>): Promise<string> => {
    let tx = unsignedTx;
    for (const signer of signers) tx = (await ok(node, 'P', 'platform.sign', { tx, signer, ...USER })).tx;
    // The tx ID: SHA-256 of the signed tx without its type ID (what issueTx answers).
    const txId = Id.fromBytes(sha256(cb58Decode(tx).subarray(4))).toString();
    await beforeIssue?.(txId);
    const issued = (await ok(node, 'P', 'platform.issueTx', { tx })).txID;
    if (issued !== txId) throw new Error(`issueTx answered ${issued}, the tx's ID is ${txId}`);
    return issued;
  };

  const { unsignedTx: subnetTx } = await ok(node, 'P', 'platform.createSubnet', { controlKeys: [control], threshold: 1, payerNonce: await nonce() });
  const id = await signAndIssue(subnetTx, [payer]);
  await until('the subnet', async () => ((await ok(node, 'P', 'platform.getSubnets', {})).subnets.some((s: { id: string }) => s.id === id) ? true : undefined));
  // The node wants a start at least 10 s ahead when the tx arrives; signing takes a moment on a busy machine.
  const startTime = Math.floor(Date.now() / 1000) + 15;
  const { unsignedTx: addTx } = await ok(node, 'P', 'platform.addNonDefaultSubnetValidator', {
    id: node.nodeId,
    subnetID: id,
    startTime,
    endTime: startTime + 2 * 24 * 3600,
    weight: 1,
    payerNonce: await nonce(),
  });
  await signAndIssue(addTx, [control, payer]);
  await until('this node to validate the subnet', async () => {
    const r = await ok(node, 'P', 'platform.getCurrentValidators', { subnetID: id });
    return r.validators.some((v: { id: string }) => v.id === node.nodeId) ? true : undefined;
  });
  return {
    id,
    async issueChain(vmID, name, genesis, beforeIssue) {
      const bytes = genesis instanceof Uint8Array ? genesis : new TextEncoder().encode(JSON.stringify(genesis));
      const { unsignedTx } = await ok(node, 'P', 'platform.createBlockchain', { subnetID: id, vmID, name, payerNonce: await nonce(), genesisData: cb58Encode(bytes) });
      return signAndIssue(unsignedTx, [control, payer], beforeIssue);
    },
    async untilValidating(chainId) {
      await until(`chain ${chainId} to run`, async () => {
        const { status } = await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: chainId });
        return status === 'Validating' ? true : undefined;
      });
    },
  };
}
