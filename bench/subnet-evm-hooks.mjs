// What the subnet-EVM's precompile and fee hooks cost, measured where they run: in one process,
// the same EvmVM class with the C-Chain's rules and with the subnet-EVM's (tx allow list, deployer
// allow list, native minter and fee manager on), each taking blocks of the same signed transfers
// (64 senders, one block's gas of 21,000-gas transfers) through admission, build, verify and
// accept. Blocks alternate C, S; node CPU ms per transfer (process.cpuUsage) is compared by
// medians. No HTTP, consensus or client polling: the e2e figure (bench/evm.mjs) carries those.
import { fileURLToPath } from 'node:url';
import { MemoryStore, utf8Encode } from '@cornice/sdk';
import { testChainContext } from '@cornice/core/testing';
import { EvmVM } from '@cornice/evm/chain';
import { subnetEvmOptions } from '@cornice/subnet-evm';
import { createTx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { report } from './lib.mjs';

const SENDERS = 64;
const GAS_LIMIT = 20_000_000;
const TX_PER_BLOCK = Math.floor(GAS_LIMIT / 21_000);
const hex = (b) => `0x${Buffer.from(b).toString('hex')}`;
const keyOf = (n) => Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : i === 30 ? n >> 8 : i === 31 ? n & 255 : 0));
const keys = Array.from({ length: SENDERS + 1 }, (_, i) => keyOf(i + 1));
const admin = hex(privateToAddress(keys[SENDERS]));
const senders = keys.slice(0, SENDERS).map((k) => hex(privateToAddress(k)));
const alloc = Object.fromEntries([admin, ...senders].map((a) => [a.slice(2), { balance: `0x${(10n ** 24n).toString(16)}` }]));
const header = { nonce: '0x0', timestamp: '0x0', extraData: '0x', gasLimit: `0x${GAS_LIMIT.toString(16)}`, difficulty: '0x0', alloc };
const forks = { homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0 };
const cChainGenesis = { ...header, config: { chainId: 43110, ...forks, shanghaiTime: 0, cancunTime: 0 } };
const on = (extra = {}) => ({ blockTimestamp: 0, adminAddresses: [admin], ...extra });
const subnetGenesis = {
  ...header,
  config: {
    chainId: 99999,
    feeConfig: { gasLimit: GAS_LIMIT, targetBlockRate: 2, minBaseFee: 25_000_000_000, targetGas: 10 ** 12, baseFeeChangeDenominator: 36, minBlockGasCost: 0, maxBlockGasCost: 0, blockGasCostStep: 0 },
    txAllowListConfig: on({ enabledAddresses: senders }),
    contractDeployerAllowListConfig: on(),
    contractNativeMinterConfig: on(),
    feeManagerConfig: on(),
  },
};

async function chain(name, options, genesis) {
  const clock = { ms: 1_000_000, now: () => clock.ms };
  const vm = new EvmVM(options);
  await vm.initialize(testChainContext({ db: new MemoryStore(), clock }), { genesis: utf8Encode(JSON.stringify(genesis)) });
  await vm.setState('bootstrapping');
  await vm.setState('normalOp');
  return { name, vm, clock, nonces: senders.map(() => 0n), next: 0, msPerTx: [] };
}

/** One block of transfers through the VM (senders in turn); pushes its CPU ms per transfer. Signing is not timed. */
async function block(c) {
  const raws = [];
  for (let n = 0; n < TX_PER_BLOCK; n++) {
    const i = (c.next + n) % SENDERS;
    const tx = { type: 2, nonce: c.nonces[i]++, to: senders[(i + 1) % SENDERS], value: 1n, gasLimit: 21_000n, maxFeePerGas: 10_000n * 10n ** 9n, maxPriorityFeePerGas: 0n };
    raws.push(createTx(tx, { common: c.vm.chain.txCommon }).sign(keys[i]).serialize());
  }
  c.next = (c.next + TX_PER_BLOCK) % SENDERS;
  c.clock.ms += 2000;
  const t0 = process.cpuUsage();
  for (const raw of raws) await c.vm.backend.sendRawTransaction(raw);
  const b = await c.vm.buildBlock();
  await b.verify();
  await c.vm.setPreference(b.id);
  await b.accept();
  const t = process.cpuUsage(t0);
  if (b.eth.transactions.length !== raws.length) throw new Error(`${c.name}: a block took ${b.eth.transactions.length} of ${raws.length} transfers`);
  c.msPerTx.push((t.user + t.system) / 1000 / raws.length);
}

const middle = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

export async function benchSubnetEvmHooks({ blocks = 12, warmup = 2 } = {}) {
  const c = await chain('C-Chain rules', undefined, cChainGenesis);
  const s = await chain('subnet-EVM rules', subnetEvmOptions, subnetGenesis);
  // BENCH_HOOKS_ONLY=C or S runs one side (to profile it with --cpu-prof).
  const only = process.env.BENCH_HOOKS_ONLY;
  for (let i = 0; i < warmup + blocks; i++) {
    if (only !== 'S') await block(c);
    if (only !== 'C') await block(s);
  }
  if (only) return;
  const cMs = middle(c.msPerTx.slice(warmup));
  const sMs = middle(s.msPerTx.slice(warmup));
  await Promise.all([c.vm.shutdown(), s.vm.shutdown()]);
  report({
    bench: 'subnet-EVM hook cost in the VM: CPU ms per signed transfer (admission, build, verify, accept), precompiles on, beside the C-Chain rules on the same EvmVM, in process',
    value: Number(((sMs / cMs - 1) * 100).toFixed(1)),
    unit: '% more CPU per transfer',
    target: '<= 10',
    subnetEvmMsPerTx: Number(sMs.toFixed(4)),
    cChainMsPerTx: Number(cMs.toFixed(4)),
    blocks,
    runs: { cChain: c.msPerTx.slice(warmup).map((x) => Number(x.toFixed(4))), subnetEvm: s.msPerTx.slice(warmup).map((x) => Number(x.toFixed(4))) },
    txPerBlock: TX_PER_BLOCK,
    statistic: 'median of interleaved blocks (C, S), after warm-up blocks',
  });
}

// `node bench/subnet-evm-hooks.mjs` runs this bench alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) await benchSubnetEvmHooks();
