import { PrivateKey } from '@cornice/sdk';
import { startVM, subnetTx } from './dist/test/platform/helpers.js';
const h = await startVM();
const keys = [PrivateKey.generate()];
const N = Number(process.argv[2] ?? 1000);
let t0 = performance.now();
for (let i = 1; i <= N; i++) {
  const t = performance.now();
  await h.vm.issueTx(subnetTx(BigInt(i), keys, 1));
  if (i % 250 === 0) console.log(`issueTx #${i}: ${(performance.now() - t).toFixed(1)} ms; total ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
