// How fast this machine is at the X-Chain's main cost, measured in the same run as the figures it
// calibrates: signature recoveries per second on one core with the backend the node uses (native
// libsecp256k1 when it loads). Issue 8 set the X-Chain targets on a machine that recovered ~20,000/s
// natively (5,000 tx/s = 1/4 of that, 1,500 tx/s on 5 nodes = 0.075 of it); `perRecovery` reports a
// figure as that fraction, which carries from one machine to another where tx/s does not.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PrivateKey, recoverAddressFromHash, sha256, secp256k1 } from '@cornice/sdk';

let measured;

/**
 * CPU time of the calling thread so far, in µs: /proc/thread-self/schedstat (Linux, nanoseconds),
 * else the process's (process.cpuUsage, which also counts V8's background threads).
 */
function threadCpuMicros() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
}

/**
 * Native (or noble) recoveries per second on one core: the best of 7 rounds of 2,000, in this
 * thread's CPU time. Rounds vary: right after a bench loaded its modules, one round measured
 * 10,000–17,000/s in the process's CPU time (which also counts V8 compiling and collecting on other
 * threads) and 13,700–17,400/s in the thread's. Best of 3 in the process's time gave 13,000–13,500/s
 * in some runs, which flattered every perRecovery figure of those runs.
 */
export function recoveriesPerSecond() {
  if (measured) return measured;
  const key = PrivateKey.generate();
  const hashes = Array.from({ length: 2000 }, () => sha256(randomBytes(32)));
  const sigs = hashes.map((h) => key.signHash(h));
  let best = 0;
  for (let round = 0; round < 7; round++) {
    const t0 = threadCpuMicros();
    for (let i = 0; i < hashes.length; i++) recoverAddressFromHash(hashes[i], sigs[i]);
    best = Math.max(best, Math.round((hashes.length / (threadCpuMicros() - t0)) * 1e6));
  }
  measured = { recoveriesPerSecond: best, backend: secp256k1.name };
  return measured;
}

/** `txPerSecond` as a fraction of this machine's recoveries per second, 3 decimals. */
export function perRecovery(txPerSecond) {
  return Number((txPerSecond / recoveriesPerSecond().recoveriesPerSecond).toFixed(3));
}
