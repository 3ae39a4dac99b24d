/**
 * The fixed transaction sequence of the tracing comparison (issue 35): contract deploys, value
 * transfers, an ERC-20, a DELEGATECALL + CREATE2, a custom-error revert deep in a call tree,
 * self-destructs, precompile calls and logs, sent from ewoq with every field explicit, one tx per
 * block, so that two targets given the same pre-state run the SAME transactions (same raw bytes,
 * same hashes) and their traces can be compared field by field (src/trace-compare.ts).
 *
 * What differs between two chains and how the sequence keeps it out of the traces:
 * - chain ID: the targets share one (anvil is started with the node's: `startAnvil({chainId})`),
 *   so the signed txs are byte-equal;
 * - base fee: every tx pays a fixed price above any base fee of either chain (legacy `gasPrice`, or
 *   EIP-1559/2930 with tip cap = fee cap), so the sender's balance and GASPRICE are the same whatever
 *   the block's base fee; only the coinbase's tip differs (an allowed difference, trace-compare.ts);
 * - coinbase: anvil's is set to the node's (`anvil_setCoinbase`) so the same account is touched;
 * - block number, timestamp, gas limit: no contract reads them (fixtures/evm/Tracing.sol);
 * - the sender's pre-state: ewoq's balance on the node's genesis is set on anvil (`anvil_setBalance`),
 *   its nonce is 0 on both; contract addresses follow from sender + nonce, so they are equal too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getCreate2Address, getCreateAddress, Interface, keccak256, SigningKey, solidityPacked, Wallet } from 'ethers';
import { EWOQ_EVM_ADDRESS, EWOQ_EVM_KEY, ok, receiptOf, type Rpc } from './evm.js';
import { REPO } from './fixtures.js';
import { compileSolidity, compileToken, type CompiledContract } from './solidity.js';

/** Every tx's price: above the C-Chain's 25 gwei floor and anvil's base fee, so neither refuses it. */
export const GAS_PRICE = 100_000_000_000n;
/** ewoq's balance on the local C-Chain's genesis (core's LOCAL_C_CHAIN_GENESIS): anvil gets the same. */
export const EWOQ_GENESIS_BALANCE = 0x33b2e3c9fd0803ce8000000n;
/** The C-Chain's coinbase (the black-hole address): anvil's is set to it. */
export const C_CHAIN_COINBASE = '0x0100000000000000000000000000000000000000';

/** EOAs that receive value: fresh on both targets (no genesis alloc, no anvil dev account). */
export const PAYEE = '0x00000000000000000000000000000000c0ffee01';
export const BENEFICIARY = '0x00000000000000000000000000000000c0ffee02';
export const TOKEN_RECIPIENT = '0x00000000000000000000000000000000c0ffee03';
export const SPLIT_PAYEE = '0x00000000000000000000000000000000c0ffee04';

export const TRACING_SOURCE_PATH = join(REPO, 'test/fixtures/evm/Tracing.sol');

export function compileTracing(): Record<string, CompiledContract> {
  return compileSolidity('Tracing.sol', readFileSync(TRACING_SOURCE_PATH, 'utf8'));
}

/** One transaction of the sequence, as sent. */
export interface SequenceTx {
  /** What it shows, e.g. `Top.run: Boom three calls deep`. */
  readonly label: string;
  readonly hash: string;
  /** The receipt's status: 1 success, 0 reverted (asserted when sent). */
  readonly status: 0 | 1;
  /** The block that holds it. */
  readonly blockNumber: string;
  /** The receipt's gasUsed: equal on two targets that executed the tx alike. */
  readonly gasUsed: string;
}

export interface SequenceResult {
  readonly txs: SequenceTx[];
  /** Contract name -> address (deploys and the CREATE2 child). */
  readonly addresses: Record<string, string>;
}

interface TxSpec {
  label: string;
  to?: string;
  data?: string;
  value?: bigint;
  gasLimit: bigint;
  /** 0 legacy (EIP-155), 1 EIP-2930 with an access list, 2 EIP-1559 with tip cap = fee cap. */
  type: 0 | 1 | 2;
  accessList?: Array<{ address: string; storageKeys: string[] }>;
  expectStatus: 0 | 1;
}

const CREATE2_SALT = `0x${'5a'.repeat(32)}`;

/**
 * Prepares an anvil to hold the same pre-state as a fresh C-Chain: ewoq's genesis balance and the
 * C-Chain's coinbase. Its chain ID is set at start (`startAnvil({chainId})`).
 */
export async function prepareAnvil(anvil: Rpc, o: { balance?: bigint; coinbase?: string } = {}): Promise<void> {
  await ok(anvil, 'anvil_setBalance', [EWOQ_EVM_ADDRESS, `0x${(o.balance ?? EWOQ_GENESIS_BALANCE).toString(16)}`]);
  await ok(anvil, 'anvil_setCoinbase', [o.coinbase ?? C_CHAIN_COINBASE]);
}

/** The specs of the whole sequence: deploys at nonces 0..10, then the traced calls. */
export function sequenceSpecs(): { specs: TxSpec[]; addresses: Record<string, string> } {
  const c = compileTracing();
  const token = compileToken();
  const at = (nonce: number) => getCreateAddress({ from: EWOQ_EVM_ADDRESS, nonce });
  const deploy = (name: string, bytecode: string, abi: any[], args: unknown[] = [], value?: bigint): TxSpec => ({
    label: `deploy ${name}`,
    data: bytecode + new Interface(abi).encodeDeploy(args).slice(2),
    gasLimit: 3_000_000n,
    type: 2,
    expectStatus: 1,
    ...(value !== undefined ? { value } : {}),
  });
  const addresses: Record<string, string> = {};
  const names = ['CorniceToken', 'Leaf', 'Middle', 'Top', 'Counter', 'Factory', 'Destroyer', 'Destructible', 'Precompiles', 'Logger', 'Splitter'];
  names.forEach((n, i) => (addresses[n] = at(i)));
  const initHash = keccak256(c.Counter!.bytecode);
  addresses.Counter_create2 = getCreate2Address(addresses.Factory!, CREATE2_SALT, initHash);

  const iface = (name: string) => new Interface(c[name]!.abi);
  const erc20 = new Interface(token.abi);
  // ecrecover's input: a fixed key's signature of a fixed digest (deterministic, RFC 6979).
  const digest = keccak256(solidityPacked(['string'], ['cornice tracing']));
  const sig = new SigningKey(`0x${'11'.repeat(32)}`).sign(digest);

  const specs: TxSpec[] = [
    deploy('CorniceToken', token.bytecode, token.abi, [10n ** 24n]),
    deploy('Leaf', c.Leaf!.bytecode, c.Leaf!.abi),
    deploy('Middle', c.Middle!.bytecode, c.Middle!.abi, [addresses.Leaf]),
    deploy('Top', c.Top!.bytecode, c.Top!.abi, [addresses.Middle]),
    deploy('Counter', c.Counter!.bytecode, c.Counter!.abi),
    deploy('Factory', c.Factory!.bytecode, c.Factory!.abi),
    deploy('Destroyer', c.Destroyer!.bytecode, c.Destroyer!.abi),
    deploy('Destructible', c.Destructible!.bytecode, c.Destructible!.abi, [], 10n ** 18n),
    deploy('Precompiles', c.Precompiles!.bytecode, c.Precompiles!.abi),
    deploy('Logger', c.Logger!.bytecode, c.Logger!.abi),
    deploy('Splitter', c.Splitter!.bytecode, c.Splitter!.abi, [SPLIT_PAYEE]),
    { label: 'value transfer to an EOA (legacy)', to: PAYEE, value: 10n ** 18n, gasLimit: 21_000n, type: 0, expectStatus: 1 },
    { label: 'value transfer to an EOA (EIP-1559)', to: PAYEE, value: 2n * 10n ** 18n, gasLimit: 30_000n, type: 2, expectStatus: 1 },
    {
      label: 'value to a contract that forwards half (EIP-2930 access list)',
      to: addresses.Splitter,
      value: 3n * 10n ** 18n,
      gasLimit: 200_000n,
      type: 1,
      accessList: [{ address: SPLIT_PAYEE, storageKeys: [] }, { address: addresses.Splitter!, storageKeys: [`0x${'00'.repeat(32)}`] }],
      expectStatus: 1,
    },
    { label: 'ERC-20 transfer', to: addresses.CorniceToken, data: erc20.encodeFunctionData('transfer', [TOKEN_RECIPIENT, 10n ** 20n]), gasLimit: 200_000n, type: 2, expectStatus: 1 },
    {
      label: 'ERC-20 transfer beyond the balance: Error(string) revert',
      to: addresses.CorniceToken,
      data: erc20.encodeFunctionData('transfer', [TOKEN_RECIPIENT, 10n ** 30n]),
      gasLimit: 200_000n,
      type: 0,
      expectStatus: 0,
    },
    { label: 'Top.run: custom error Boom three calls deep (A -> B -> C)', to: addresses.Top, data: iface('Top').encodeFunctionData('run', [21n]), gasLimit: 300_000n, type: 2, expectStatus: 0 },
    {
      label: 'Factory.deployAndDelegate: DELEGATECALL, CREATE2, CALL',
      to: addresses.Factory,
      data: iface('Factory').encodeFunctionData('deployAndDelegate', [addresses.Counter, CREATE2_SALT]),
      gasLimit: 1_000_000n,
      type: 2,
      expectStatus: 1,
    },
    {
      label: 'Destroyer.createAndDestroy: same-tx create + SELFDESTRUCT (constructor and call)',
      to: addresses.Destroyer,
      data: iface('Destroyer').encodeFunctionData('createAndDestroy', [BENEFICIARY]),
      value: 2n * 10n ** 18n,
      gasLimit: 1_000_000n,
      type: 2,
      expectStatus: 1,
    },
    { label: 'Destructible.destroy: plain SELFDESTRUCT (cancun: balance moves, account stays)', to: addresses.Destructible, data: iface('Destructible').encodeFunctionData('destroy', [BENEFICIARY]), gasLimit: 200_000n, type: 0, expectStatus: 1 },
    {
      label: 'Precompiles.hashAll: sha256, ecrecover, identity by STATICCALL',
      to: addresses.Precompiles,
      data: iface('Precompiles').encodeFunctionData('hashAll', [solidityPacked(['string'], ['the quick brown fox jumps over the lazy dog, twice over']), digest, sig.v, sig.r, sig.s]),
      gasLimit: 300_000n,
      type: 2,
      expectStatus: 1,
    },
    { label: 'Logger.emitAround: LOG0..LOG4 and events around a nested call', to: addresses.Logger, data: iface('Logger').encodeFunctionData('emitAround', [addresses.Counter, `0x${'7a'.repeat(32)}`]), gasLimit: 300_000n, type: 2, expectStatus: 1 },
    { label: 'Counter.bump out of gas', to: addresses.Counter, data: iface('Counter').encodeFunctionData('bump', [3n]), gasLimit: 23_000n, type: 0, expectStatus: 0 },
  ];
  return { specs, addresses };
}

/**
 * Sends the sequence on `rpc` (chain ID from the target), each tx after the previous one's receipt,
 * and checks each status. ewoq must be at nonce 0 (a fresh chain).
 */
export async function runTraceSequence(rpc: Rpc): Promise<SequenceResult> {
  const chainId = BigInt(await ok(rpc, 'eth_chainId'));
  const start = BigInt(await ok(rpc, 'eth_getTransactionCount', [EWOQ_EVM_ADDRESS, 'latest']));
  if (start !== 0n) throw new Error(`the sequence needs ewoq at nonce 0 (contract addresses follow from it), got ${start}`);
  const { specs, addresses } = sequenceSpecs();
  const wallet = new Wallet(EWOQ_EVM_KEY);
  const txs: SequenceTx[] = [];
  for (const [nonce, s] of specs.entries()) {
    const fees = s.type === 0 || s.type === 1 ? { gasPrice: GAS_PRICE } : { maxFeePerGas: GAS_PRICE, maxPriorityFeePerGas: GAS_PRICE };
    const raw = await wallet.signTransaction({
      type: s.type,
      chainId,
      nonce,
      gasLimit: s.gasLimit,
      ...fees,
      to: s.to ?? null,
      data: s.data ?? '0x',
      value: s.value ?? 0n,
      ...(s.accessList ? { accessList: s.accessList } : {}),
    });
    const hash = await ok(rpc, 'eth_sendRawTransaction', [raw]);
    const r = await receiptOf(rpc, hash);
    const status = Number(BigInt(r.status)) as 0 | 1;
    if (status !== s.expectStatus) throw new Error(`${s.label} (nonce ${nonce}, ${hash}): status ${status}, expected ${s.expectStatus}`);
    if (s.to === undefined && r.contractAddress?.toLowerCase() !== addresses[s.label.replace('deploy ', '')]!.toLowerCase()) {
      throw new Error(`${s.label}: deployed at ${r.contractAddress}, expected ${addresses[s.label.replace('deploy ', '')]}`);
    }
    txs.push({ label: s.label, hash, status, blockNumber: r.blockNumber, gasUsed: r.gasUsed });
  }
  return { txs, addresses };
}
