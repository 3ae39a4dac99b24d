/**
 * The platform chain's subnet flow through a node's API, as a user does it: a keystore user holding
 * the ewoq account, a 1-of-1 subnet, this node as its validator (its start a few seconds ahead, waited
 * for in real time), then chains created on it by vmID with a genesis.
 */
import { cb58Encode } from '@cornice/sdk';
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
   * the chain ID once the tx is issued (before the chain runs: see `untilValidating`).
   */
  issueChain(vmID: string, name: string, genesis: Uint8Array | object): Promise<string>;
  /** Waits for the chain to be Validating (it runs on this node). */
  untilValidating(chainId: string): Promise<void>;
}

/** Creates a 1-of-1 subnet validated by `node` (takes ~15 s: the validator's start is in the future). */
export async function openSubnet(node: NodeProcess): Promise<Subnet> {
  await ok(node, 'keystore', 'keystore.createUser', USER);
  const payer = (await ok(node, 'P', 'platform.createAccount', { ...USER, privateKey: EWOQ_P_KEY })).address;
  const control = (await ok(node, 'P', 'platform.createAccount', USER)).address;
  const nonce = async () => Number((await ok(node, 'P', 'platform.getAccount', { address: payer })).nonce) + 1;
  const signAndIssue = async (unsignedTx: string, signers: string[]): Promise<string> => {
    let tx = unsignedTx;
    for (const signer of signers) tx = (await ok(node, 'P', 'platform.sign', { tx, signer, ...USER })).tx;
    return (await ok(node, 'P', 'platform.issueTx', { tx })).txID;
  };

  const { unsignedTx: subnetTx } = await ok(node, 'P', 'platform.createSubnet', { controlKeys: [control], threshold: 1, payerNonce: await nonce() });
  const id = await signAndIssue(subnetTx, [payer]);
  await until('the subnet', async () => ((await ok(node, 'P', 'platform.getSubnets', {})).subnets.some((s: { id: string }) => s.id === id) ? true : undefined));
  const startTime = Math.floor(Date.now() / 1000) + 10;
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
    async issueChain(vmID, name, genesis) {
      const bytes = genesis instanceof Uint8Array ? genesis : new TextEncoder().encode(JSON.stringify(genesis));
      const { unsignedTx } = await ok(node, 'P', 'platform.createBlockchain', { subnetID: id, vmID, name, payerNonce: await nonce(), genesisData: cb58Encode(bytes) });
      return signAndIssue(unsignedTx, [control, payer]);
    },
    async untilValidating(chainId) {
      await until(`chain ${chainId} to run`, async () => {
        const { status } = await ok(node, 'P', 'platform.getBlockchainStatus', { blockchainID: chainId });
        return status === 'Validating' ? true : undefined;
      });
    },
  };
}
