// CPU of a node that cannot make progress: default flags (sybil protection on, so the timestamp
// chain needs the 5 local genesis validators) with node 1's certificate, one timestamp.proposeBlock,
// then `seconds` of waiting. CPU seconds come from /proc/<pid>/stat (utime + stime). The baseline is
// an idle bare node process over the same window.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { report, rpc, startNode, track } from './lib.mjs';

const fixture = (f) => fileURLToPath(new URL(`../core/fixtures/staking/local/${f}`, import.meta.url));
const TICKS_PER_SECOND = 100;

async function cpuSeconds(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

export async function benchStuckNode({ seconds = 30 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-bench-stuck-'));
  const node = await startNode([`--data-dir=${dir}`, `--staking-tls-cert-file=${fixture('staker1.crt')}`, `--staking-tls-key-file=${fixture('staker1.key')}`]);
  const idle = track(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' }));
  try {
    const r = await rpc(`${node.url}/ext/timestamp`, 'timestamp.proposeBlock', { data: 'SkB92YpWm4Q2iPnLGCuDPZPgUQMxajqQQuz91oi3xD984f8r' });
    if (!r.result) throw new Error(JSON.stringify(r.error));
    const [n0, b0] = [await cpuSeconds(node.proc.pid), await cpuSeconds(idle.pid)];
    await new Promise((res) => setTimeout(res, seconds * 1000));
    const [n1, b1] = [await cpuSeconds(node.proc.pid), await cpuSeconds(idle.pid)];
    const health = await (await fetch(`${node.url}/ext/health`)).json();
    const metrics = await (await fetch(`${node.url}/ext/metrics`)).text();
    report({
      bench: `CPU of a default-flag node over ${seconds} s after a proposeBlock with no validators connected`,
      value: Number((n1 - n0).toFixed(2)),
      unit: 's',
      target: `< 0.5 over 30 s`,
      baselineIdleNodeProcessS: Number((b1 - b0).toFixed(2)),
      polls: Number(metrics.match(/cornice_chain_polls\{[^}]*\} (\d+)/)?.[1]),
      health: health.checks['chain timestamp']?.error?.message,
    });
  } finally {
    idle.kill('SIGTERM');
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
