/**
 * Runs one VM alone: a one-node in-process chain with the real Snowman engine and the real HTTP
 * front end on an ephemeral port, over a memory store. For VM authors' tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Id,
  MemoryStore,
  NodeError,
  createClient,
  httpTransport,
  silentLogger,
  type ChainVM,
  type Client,
  type KeyValueStore,
  type ServiceDef,
  type VMFactory,
} from '@cornice/sdk';
import type { AcceptedBlock, Chain } from '../chains/manager.js';
import { parseConfig } from '../config/parse.js';
import { genesisChainId, genesisOf } from '../genesis/genesis.js';
import { startNode, type RunningNode } from '../node/node.js';
import { unclosable } from './context.js';
import { postRpc, type RpcReply } from './rpc.js';

export interface RunVMOptions {
  /** The chain's genesis bytes (default empty). */
  genesis?: Uint8Array;
  /** Chain name (default the VM's name) and aliases (default [the VM's name]). */
  name?: string;
  aliases?: string[];
  /** Extra node flags, e.g. ['--snow-virtuous-commit-threshold=5']. */
  flags?: string[];
  /** Injected clock (ms) for the chain context and the engine. */
  now?: () => number;
  /** Reuse a store (restart). */
  store?: KeyValueStore;
  /** Reuse a data dir (restart keeps the node ID). */
  dataDir?: string;
}

/** The data dir a harness created itself, removed by the last stop() of its restarts. */
const ownedDirs = new WeakMap<KeyValueStore, string>();

export interface VMHarness {
  readonly node: RunningNode;
  readonly chain: Chain;
  readonly chainId: Id;
  readonly vm: ChainVM;
  /** The chain's JSON-RPC endpoint, http://127.0.0.1:<port>/ext/bc/<chainID>. */
  readonly url: string;
  /** Blocks accepted since this harness started, in order. */
  readonly accepted: readonly AcceptedBlock[];
  /** A raw JSON-RPC call to the chain endpoint (or `/ext/bc/<chainID>/<path>`). */
  call(method: string, params?: unknown, path?: string): Promise<RpcReply>;
  /** A typed client for a service served by the chain. */
  client<S extends ServiceDef>(def: S, path?: string): Client<S>;
  /** Resolves with the first accepted block (past or future) matching `match` (a height, an ID, or a predicate). */
  waitForAccepted(match: number | Id | ((b: AcceptedBlock) => boolean), timeoutMs?: number): Promise<AcceptedBlock>;
  /** Stops the node and starts it again over the same store and data dir. */
  restart(): Promise<VMHarness>;
  /** Stops the node (and removes the data dir unless it was given). */
  stop(): Promise<void>;
}

export class HarnessTimeout extends NodeError<'Timeout'> {}

export class HarnessError extends NodeError<'NotRun'> {}

export async function runVM(factory: VMFactory, opts: RunVMOptions = {}): Promise<VMHarness> {
  const store = opts.store ?? new MemoryStore();
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'cornice-vm-')));
  if (opts.dataDir === undefined) ownedDirs.set(store, dataDir);
  const parsed = parseConfig(
    ['--http-port=0', '--staking-port=0', `--data-dir=${dataDir}`, '--log-level=off', '--sybil-protection-enabled=false', '--vms=', ...(opts.flags ?? [])],
    {},
  );
  if (parsed.kind !== 'run') throw new TypeError('runVM: flags must describe a node run');
  const name = opts.name ?? factory.name;
  const def = { name, subnetId: Id.empty, vmId: factory.vmId, fxIds: [], genesis: opts.genesis ?? new Uint8Array() };
  const chainId = genesisChainId(parsed.config.networkId, def);
  const node = await startNode(parsed.config, {
    log: silentLogger,
    builtinVMs: [factory],
    keystoreKdf: { N: 1024, r: 8, p: 1 },
    db: unclosable(store),
    ...(opts.now ? { now: opts.now } : {}),
    // One genesis chain on the Default Subnet, beside the platform chain.
    genesis: () => genesisOf(parsed.config.networkId, { chains: [{ ...def, aliases: opts.aliases ?? [factory.name] }], validators: [] }),
  });
  const chain = node.chainManager.chains.find((c) => c.id.equals(chainId));
  if (!chain) {
    await node.stop();
    const why = node.chainCreator.failureOf(chainId) ?? 'it was not created';
    throw new HarnessError('NotRun', `runVM: chain "${name}" of ${factory.name} did not start: ${why}`);
  }
  const accepted: AcceptedBlock[] = [];
  const waiters = new Set<() => void>();
  chain.accepted$.subscribe((b) => {
    accepted.push(b);
    for (const w of waiters) w();
  });
  const base = `${node.url}/ext/bc/${chain.id}`;
  const harness: VMHarness = {
    node,
    chain,
    chainId: chain.id,
    vm: chain.vm,
    url: base,
    accepted,
    call: (method, params, path) => postRpc(path ? `${base}/${path}` : base, method, params),
    client(def, path) {
      return createClient(def, httpTransport(path ? `${base}/${path}` : base));
    },
    waitForAccepted(match, timeoutMs = 10_000) {
      const test =
        typeof match === 'number' ? (b: AcceptedBlock) => b.height >= match : match instanceof Id ? (b: AcceptedBlock) => b.id.equals(match) : match;
      const found = accepted.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new HarnessTimeout('Timeout', `no matching block accepted within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          const b = accepted.find(test);
          if (!b) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(b);
        };
        waiters.add(check);
      });
    },
    async restart() {
      await node.stop();
      return runVM(factory, { ...opts, store, dataDir });
    },
    async stop() {
      await node.stop();
      if (ownedDirs.get(store) === dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
