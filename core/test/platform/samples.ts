// One tx of every kind, with distinct non-trivial values, and a helper that turns values holding
// IDs, bytes and bigints into comparable plain JSON (uvu's deep equality cannot see an Id's bytes).
import * as assert from 'uvu/assert';
import { Id, PrivateKey, ShortId, hasErrorCode, jsonReplacer, sha256 } from '@cornice/sdk';
import type { PlatformTx } from '../../src/platform/model.js';

export const EWOQ_KEY = 'ewoqjP7PxY4yr3iLTpLisriqt94hdyDFNgchSxGGztUrTXtNN';
export const EWOQ_ADDRESS = '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV';
export const ewoq = (): PrivateKey => PrivateKey.fromString(EWOQ_KEY);

/** Deterministic 32/20/65-byte values, distinct per label. */
export const id = (label: string): Id => Id.fromBytes(sha256(new TextEncoder().encode(label)));
export const shortId = (label: string): ShortId => ShortId.fromBytes(sha256(new TextEncoder().encode(label)).subarray(0, 20));
export const sig = (n: number): Uint8Array => new Uint8Array(65).map((_, i) => (i * 7 + n) & 0xff);

export function sampleTxs(): PlatformTx[] {
  const timed = { nodeId: shortId('node'), weight: 20_000n, start: 1_600_000_000, end: 1_600_086_400 };
  return [
    { kind: 'addDefaultSubnetValidator', ...timed, networkId: 12345, nonce: 7n, destination: shortId('dest'), shares: 300_000, sig: sig(1) },
    { kind: 'addDefaultSubnetDelegator', ...timed, networkId: 12345, nonce: 8n, destination: shortId('dest2'), sig: sig(2) },
    { kind: 'addNonDefaultSubnetValidator', ...timed, weight: 1n, subnetId: id('subnet'), networkId: 12345, nonce: 9n, controlSigs: [sig(3), sig(4)], payerSig: sig(5) },
    { kind: 'createSubnet', networkId: 12345, nonce: 10n, controlKeys: [shortId('k1'), shortId('k2'), shortId('k3')], threshold: 2, sig: sig(6) },
    {
      kind: 'createChain',
      networkId: 12345,
      subnetId: id('subnet'),
      nonce: 11n,
      chainName: 'my chain ✓',
      vmId: id('vm'),
      fxIds: [id('fx1'), id('fx2')],
      genesisData: new Uint8Array([1, 2, 3, 4]),
      controlSigs: [sig(7)],
      payerSig: sig(8),
    },
    {
      kind: 'import',
      networkId: 12345,
      nonce: 12n,
      account: shortId('account'),
      ins: [
        { txId: id('utxo tx 1'), outputIndex: 0, assetId: id('asset'), input: { amount: 5n, sigIndices: [0] } },
        { txId: id('utxo tx 2'), outputIndex: 3, assetId: id('asset'), input: { amount: (1n << 64n) - 1n, sigIndices: [0, 1] } },
      ],
      sig: sig(9),
      creds: [{ sigs: [sig(10)] }, { sigs: [sig(11), sig(12)] }],
    },
    {
      kind: 'export',
      networkId: 12345,
      nonce: 13n,
      outs: [{ assetId: id('asset'), out: { kind: 'transfer', amount: 1_000n, locktime: 0n, threshold: 1, addresses: [shortId('to')] } }],
      sig: sig(13),
    },
    { kind: 'advanceTime', time: 1_600_000_123 },
    { kind: 'rewardValidator', txId: id('staker') },
  ];
}

/** A JSON-comparable copy: IDs as cb58, bytes as cb58, bigints as decimal strings. */
export const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, jsonReplacer));

/** The message of the PlatformError('Malformed') `f` throws; fails the test on no error or another one. */
export function malformed(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(hasErrorCode(e, 'Malformed'), `expected Malformed, got ${String(e)}`);
    assert.is((e as Error).name, 'PlatformError');
    return (e as Error).message;
  }
  assert.unreachable('no error');
  return '';
}
