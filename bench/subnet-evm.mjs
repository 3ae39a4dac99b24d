// A subnet-EVM chain for the EVM bench, made through the platform API as a user does it (the
// README's flow): a keystore user holding the ewoq account, a 1-of-1 subnet this node validates
// (its start ~15 s ahead), then platform.createBlockchain with the `subnetevm` vmID. The genesis
// turns on the four precompiles whose hooks run on every tx, and takes block gas cost and fee
// throttling out, so that the run measures what the hooks cost.
import { cb58Encode } from '@cornice/sdk';
import { rpc } from './lib.mjs';

export const SUBNET_EVM_VM_ID = 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy';
const EWOQ_P_KEY = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
const USER = { username: 'bench-subnet-owner', password: 'a Strong passw0rd!' };
/** How far ahead the validator starts: the node wants >= 10 s when the tx arrives. */
const VALIDATOR_START_AHEAD_S = 15;

async function ok(url, method, params) {
  const r = await rpc(url, method, params);
  if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
  return r.result;
}

async function until(what, read, maxMs) {
  const t0 = Date.now();
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() - t0 > maxMs) throw new Error(`timed out after ${maxMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issues the subnet and this node's validator tx, without waiting for the validator's start: the
 * caller can measure something else meanwhile. `createChain` waits for the start, issues the
 * chain and resolves with its ID once it runs here.
 */
export async function openSubnet(baseUrl, { maxWaitMs = 120_000 } = {}) {
  const P = `${baseUrl}/ext/P`;
  const nodeId = (await ok(`${baseUrl}/ext/admin`, 'admin.getNodeID', {})).nodeID;
  await ok(`${baseUrl}/ext/keystore`, 'keystore.createUser', USER);
  const payer = (await ok(P, 'platform.createAccount', { ...USER, privateKey: EWOQ_P_KEY })).address;
  const control = (await ok(P, 'platform.createAccount', USER)).address;
  const nonce = async () => Number((await ok(P, 'platform.getAccount', { address: payer })).nonce) + 1;
  const signAndIssue = async (tx, signers) => {
    for (const signer of signers) tx = (await ok(P, 'platform.sign', { tx, signer, ...USER })).tx;
    return (await ok(P, 'platform.issueTx', { tx })).txID;
  };
  const subnetID = await signAndIssue((await ok(P, 'platform.createSubnet', { controlKeys: [control], threshold: 1, payerNonce: await nonce() })).unsignedTx, [payer]);
  await until('the subnet', async () => ((await ok(P, 'platform.getSubnets', { ids: [subnetID] })).subnets?.length ? true : undefined), maxWaitMs);
  const startTime = Math.floor(Date.now() / 1000) + VALIDATOR_START_AHEAD_S;
  const add = await ok(P, 'platform.addNonDefaultSubnetValidator', { id: nodeId, subnetID, startTime, endTime: startTime + 2 * 86400, weight: 1, payerNonce: await nonce() });
  await signAndIssue(add.unsignedTx, [control, payer]);
  return {
    subnetID,
    async createChain(name, genesis) {
      await until('this node to validate the subnet', async () => ((await ok(P, 'platform.getCurrentValidators', { subnetID })).validators.some((v) => v.id === nodeId) ? true : undefined), maxWaitMs);
      const bytes = new TextEncoder().encode(JSON.stringify(genesis));
      const create = await ok(P, 'platform.createBlockchain', { subnetID, vmID: SUBNET_EVM_VM_ID, name, payerNonce: await nonce(), genesisData: cb58Encode(bytes) });
      const chainId = await signAndIssue(create.unsignedTx, [control, payer]);
      await until(`chain ${chainId} to run`, async () => ((await ok(P, 'platform.getBlockchainStatus', { blockchainID: chainId })).status === 'Validating' ? true : undefined), maxWaitMs);
      await until(`chain ${chainId}'s RPC`, async () => ((await rpc(`${baseUrl}/ext/bc/${chainId}/rpc`, 'eth_chainId', []).catch(() => ({}))).result ? true : undefined), maxWaitMs);
      return chainId;
    },
  };
}

/**
 * The bench chain's genesis: the deployer allow list, tx allow list (`senders` enabled), native
 * minter and fee manager active from genesis with `admin` their admin, so their hooks run on every
 * tx; no block gas cost and a gas target no run reaches, so fees never throttle; `gasLimit` as the
 * C-Chain's; `admin` and `senders` funded.
 */
export function benchSubnetEvmGenesis({ chainId, gasLimit, minBaseFee, admin, senders, balance }) {
  const alloc = Object.fromEntries([admin, ...senders].map((a) => [a, { balance: `0x${balance.toString(16)}` }]));
  return {
    config: {
      chainId,
      feeConfig: {
        gasLimit: Number(gasLimit),
        targetBlockRate: 2,
        minBaseFee: Number(minBaseFee),
        targetGas: 1_000_000_000_000,
        baseFeeChangeDenominator: 36,
        minBlockGasCost: 0,
        maxBlockGasCost: 0,
        blockGasCostStep: 0,
      },
      subnetEVMTimestamp: 0,
      durangoTimestamp: 0,
      contractDeployerAllowListConfig: { blockTimestamp: 0, adminAddresses: [admin] },
      contractNativeMinterConfig: { blockTimestamp: 0, adminAddresses: [admin] },
      txAllowListConfig: { blockTimestamp: 0, adminAddresses: [admin], enabledAddresses: senders },
      feeManagerConfig: { blockTimestamp: 0, adminAddresses: [admin] },
    },
    alloc,
    gasLimit: `0x${BigInt(gasLimit).toString(16)}`,
  };
}
