// Five local nodes under faults (the five genesis validators, default settings, LevelDB, TLS):
// 1. C-Chain transfers sent round-robin to all five nodes: accepted/s (20 funded senders, each
//    sending its txs in order to one node) and issue -> accept p50 (one transfer at a time, each to
//    the next node, until its receipt is there).
// 2. The same, and X-Chain transfers/s and p50, with node 5 frozen (SIGSTOP; load sent to nodes
//    1-4 only), beside the figures without the fault from this same run (target: >= 0.7 of the
//    throughput, p50 <= 2x).
// 3. Time from thawing node 5 (SIGCONT) until node 1 counts it again (node 1's X-Chain health no
//    longer lists a validator not answering), under a light C-Chain load.
// 4. Node 5 killed (-9) while transfers go on for 10 s, then started again on its data: time from
//    its start to its X-Chain and C-Chain being at node 1's height.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import { PrivateKey } from '@cornice/sdk';
import { acceptedFeed, fanOut, issueInBatches, issueOneByOne, signedTx, transferOut } from './avm.mjs';
import { freePort, report, rpc } from './lib.mjs';
import { startNode, until } from './network.mjs';

const EWOQ_EVM = '0x56289e99c94b6912bfc12adc093c9b51124f0dc54ac7a766b2bc5ccf558d8027';
const SENDERS = 20;

const evm = async (url, method, params = []) => {
  const r = await fetch(`${url}/ext/bc/C/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), signal: AbortSignal.timeout(30_000) });
  const j = await r.json();
  if (j.error) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
};
const evmBatch = async (url, calls) => {
  const r = await fetch(`${url}/ext/bc/C/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }))), signal: AbortSignal.timeout(30_000) });
  return r.json();
};

/** A chain's last accepted height at a node, from its health report. */
async function heightOf(url, chain) {
  const r = await fetch(`${url}/ext/health`, { signal: AbortSignal.timeout(5_000) });
  return (await r.json()).checks?.[`chain ${chain}`]?.message?.lastAcceptedHeight;
}

/** Waits until every tx hash has a receipt at `url` (polled in batches); ms from `t0` to the last. */
async function untilIncluded(url, hashes, t0, maxMs = 120_000) {
  let left = [...hashes];
  while (left.length > 0) {
    if (performance.now() - t0 > maxMs) throw new Error(`${left.length} txs not included within ${maxMs} ms`);
    const replies = await evmBatch(url, left.slice(0, 500).map((h) => ['eth_getTransactionReceipt', [h]]));
    const done = new Set(replies.filter((r) => r.result).map((r) => r.result.transactionHash));
    left = left.filter((h) => !done.has(h));
    if (left.length > 0) await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - t0;
}

/** C-Chain senders: SENDERS wallets funded by ewoq in one block. */
async function fundSenders(url) {
  const ewoq = new Wallet(EWOQ_EVM);
  const chainId = Number(await evm(url, 'eth_chainId'));
  const gasPrice = BigInt(await evm(url, 'eth_gasPrice')) * 3n;
  const nonce = Number(await evm(url, 'eth_getTransactionCount', [ewoq.address, 'pending']));
  const senders = Array.from({ length: SENDERS }, () => Wallet.createRandom());
  const raws = await Promise.all(senders.map((s, i) => ewoq.signTransaction({ to: s.address, value: 10n ** 21n, nonce: nonce + i, gasLimit: 21_000n, gasPrice, chainId, type: 0 })));
  const hashes = (await evmBatch(url, raws.map((raw) => ['eth_sendRawTransaction', [raw]]))).map((r) => r.result);
  await untilIncluded(url, hashes, performance.now());
  return { senders: senders.map((w) => ({ wallet: w, nonce: 0 })), chainId, gasPrice };
}

const TO = '0x' + '22'.repeat(20);

/** `perSender` transfers from each sender, sender j to urls[j % n] in order (one batch each): accepted/s. */
async function cThroughput(c, urls, perSender) {
  const signed = await Promise.all(
    c.senders.map(async (s, j) => {
      const raws = [];
      for (let k = 0; k < perSender; k++) raws.push(await s.wallet.signTransaction({ to: TO, value: 1n, nonce: s.nonce++, gasLimit: 21_000n, gasPrice: c.gasPrice, chainId: c.chainId, type: 0 }));
      return { url: urls[j % urls.length], raws };
    }),
  );
  const t0 = performance.now();
  const hashes = (await Promise.all(signed.map(async ({ url, raws }) => (await evmBatch(url, raws.map((raw) => ['eth_sendRawTransaction', [raw]]))).map((r) => r.result)))).flat();
  const errors = hashes.filter((h) => !h).length;
  const ms = await untilIncluded(urls[0], hashes.filter(Boolean), t0);
  return { perSecond: Math.round((hashes.length / ms) * 1000), errors };
}

/** One transfer at a time, each to the next of `urls`, until its receipt is there: p50 and p90 ms. */
async function cLatency(c, urls, samples) {
  const lat = [];
  const s = c.senders[0];
  for (let i = 0; i < samples; i++) {
    const url = urls[i % urls.length];
    const raw = await s.wallet.signTransaction({ to: TO, value: 1n, nonce: s.nonce++, gasLimit: 21_000n, gasPrice: c.gasPrice, chainId: c.chainId, type: 0 });
    const t0 = performance.now();
    const hash = await evm(url, 'eth_sendRawTransaction', [raw]);
    lat.push(await untilIncluded(url, [hash], t0));
  }
  lat.sort((a, b) => a - b);
  return { p50: Math.round(lat[Math.floor(lat.length * 0.5)]), p90: Math.round(lat[Math.floor(lat.length * 0.9)]) };
}

export async function benchNetworkFaults({ xTransfers = 2000, cPerSender = 50, latencySamples = 40, downSeconds = 10 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-faults-'));
  const beaconPort = await freePort();
  const stakingPorts = [beaconPort, await freePort(), await freePort(), await freePort(), await freePort()];
  const nodes = [];
  const feeds = [];
  try {
    nodes.push(await startNode(1, dir, beaconPort, beaconPort));
    nodes.push(...(await Promise.all([2, 3, 4, 5].map((i) => startNode(i, dir, beaconPort, stakingPorts[i - 1])))));
    await until('all connected', async () => {
      const counts = await Promise.all(nodes.map(async (n) => (await rpc(`${n.url}/ext/admin`, 'admin.peers')).result?.peers.length));
      return counts.every((c) => c === 4) ? true : undefined;
    });
    const urls = nodes.map((n) => n.url);
    const live = urls.slice(0, 4);
    const X = (list) => list.map((u) => `${u}/ext/bc/X`);
    const feed1 = await acceptedFeed(`${urls[0].replace('http', 'ws')}/ext/bc/X/pubsub`);
    const feed2 = await acceptedFeed(`${urls[1].replace('http', 'ws')}/ext/bc/X/pubsub`);
    feeds.push(feed1, feed2);
    const pieces = await fanOut(X(urls)[0], feed1, 3 * xTransfers + 2 * latencySamples + 500 + 1_500);
    const to = PrivateKey.generate().address;
    const signed = pieces.map((u) => signedTx([u], [transferOut(u.assetId, to, 1_000n)]));
    const xRound = async (list, txs) => {
      const t0 = performance.now();
      const all = Promise.all(txs.map(({ id }) => feed1.wait(id.toString())));
      const errors = await issueInBatches(X(list), txs);
      await all;
      return { perSecond: Math.round((txs.length / (performance.now() - t0)) * 1000), errors };
    };
    const xLatency = async (txs) => {
      const pct = await issueOneByOne(X(urls)[1], feed2, txs);
      return { p50: pct(0.5), p90: pct(0.9) };
    };
    const c = await fundSenders(urls[0]);
    // Warm-up: V8 compiles the paths in every node.
    await xRound(urls, signed.splice(0, 500));
    await cThroughput(c, urls, Math.ceil(cPerSender / 2));

    // 1. Without a fault.
    const before = {
      x: await xRound(urls, signed.splice(0, xTransfers)),
      xLat: await xLatency(signed.splice(0, latencySamples)),
      c: await cThroughput(c, urls, cPerSender),
      cLat: await cLatency(c, urls, latencySamples),
    };
    report({ bench: 'C-Chain transfers accepted/s on 5 local nodes, sent round-robin to all five', value: before.c.perSecond, unit: 'tx/s', senders: SENDERS, transfers: SENDERS * cPerSender, errors: before.c.errors });
    report({ bench: 'C-Chain issue -> accept p50 on 5 local nodes, each transfer to the next node', value: before.cLat.p50, unit: 'ms', p90: before.cLat.p90, samples: latencySamples });

    // 2. Node 5 frozen (SIGSTOP): the same load to nodes 1-4. Each chain's first round starts at
    //    the freeze and pays for noticing it (its queries to node 5 time out, ~2 s); the second is
    //    the steady state.
    process.kill(nodes[4].pid, 'SIGSTOP');
    const frozenAt = performance.now();
    const xFirst = await xRound(live, signed.splice(0, xTransfers));
    const cFirst = await cThroughput(c, live, cPerSender);
    const during = {
      x: await xRound(live, signed.splice(0, xTransfers)),
      xLat: await xLatency(signed.splice(0, latencySamples)),
      c: await cThroughput(c, live, cPerSender),
      cLat: await cLatency(c, live, latencySamples),
    };
    const firstRound = { x: xFirst, c: cFirst };
    const frozenMs = performance.now() - frozenAt;
    for (const [chain, key, latKey] of [
      ['X', 'x', 'xLat'],
      ['C', 'c', 'cLat'],
    ]) {
      report({
        bench: `${chain}-Chain transfers/s with one of five validators frozen (SIGSTOP)`,
        value: during[key].perSecond,
        unit: 'tx/s',
        withoutFault: before[key].perSecond,
        ratio: Number((during[key].perSecond / before[key].perSecond).toFixed(2)),
        target: 'ratio >= 0.7',
        firstRoundFromTheFreeze: firstRound[key].perSecond,
        errors: during[key].errors + firstRound[key].errors,
      });
      report({
        bench: `${chain}-Chain issue -> accept p50 with one of five validators frozen`,
        value: during[latKey].p50,
        unit: 'ms',
        withoutFault: before[latKey].p50,
        ratio: Number((during[latKey].p50 / before[latKey].p50).toFixed(2)),
        target: 'ratio <= 2',
        p90: during[latKey].p90,
        p90WithoutFault: before[latKey].p90,
      });
    }

    // 3. Thaw: until node 1 counts node 5 again (light C-Chain load meanwhile).
    const thawedAt = performance.now();
    process.kill(nodes[4].pid, 'SIGCONT');
    let load = true;
    const light = (async () => {
      while (load) await cLatency(c, live, 1);
    })();
    const counted = await until(
      'node 1 counts node 5 again',
      async () => {
        const r = await (await fetch(`${urls[0]}/ext/health`)).json();
        const answering = ['X', 'C'].every((ch) => !String(r.checks?.[`chain ${ch}`]?.message?.validators ?? '').includes('not answering'));
        return answering ? performance.now() - thawedAt : undefined;
      },
      60_000,
    );
    load = false;
    await light;
    report({ bench: 'time from thawing a frozen validator to node 1 counting it again (X and C health)', value: Math.round(counted), unit: 'ms', frozenForMs: Math.round(frozenMs) });

    // 4. Node 5 killed, transfers go on, node 5 started again: time to catch up.
    await nodes[4].kill();
    const stopAt = performance.now() + downSeconds * 1000;
    while (performance.now() < stopAt && signed.length >= 100) {
      await xRound(live, signed.splice(0, 100));
      await cThroughput(c, live, 2);
    }
    const restartT0 = performance.now();
    nodes[4] = await startNode(5, dir, beaconPort, stakingPorts[4]);
    const target = { X: await heightOf(urls[0], 'X'), C: await heightOf(urls[0], 'C') };
    const caughtUp = await until(
      'the restarted node at node 1 height',
      async () => {
        const [x, cc] = await Promise.all([heightOf(nodes[4].url, 'X').catch(() => undefined), heightOf(nodes[4].url, 'C').catch(() => undefined)]);
        return x >= target.X && cc >= target.C ? performance.now() - restartT0 : undefined;
      },
      120_000,
    );
    report({ bench: 'a validator killed (-9) for 10 s of load, started again: from its start to X and C at node 1 height', value: Math.round(caughtUp), unit: 'ms', heights: target });
  } finally {
    for (const f of feeds) f.close();
    for (const n of nodes) {
      try {
        process.kill(n.pid, 'SIGCONT');
      } catch {}
    }
    await Promise.all(nodes.map((n) => n.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchNetworkFaults({ xTransfers: Number(process.env.X ?? 2000), cPerSender: Number(process.env.C ?? 50), latencySamples: Number(process.env.L ?? 40) });
}
