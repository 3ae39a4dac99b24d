// The network's wiring from the config (node/network.ts): the limit flags reach the Network's
// limits, and the validator check behind the request budget follows the primary network's set.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, ShortId } from '@cornice/sdk';
import { parseConfig } from '../../src/config/parse.js';
import { networkLimitsOf, validatorCheck } from '../../src/node/network.js';
import { ValidatorSets } from '../../src/validators/validators.js';

const config = (argv: string[]) => {
  const r = parseConfig(argv, {}, { homedir: '/home/op', readFile: () => undefined as never });
  if (r.kind !== 'run') throw new Error(r.kind);
  return r.config;
};
const node = (n: number) => ShortId.fromBytes(new Uint8Array(20).fill(n));

test('the limit flags reach the network: inbound gate, handshake deadline, request budget (pools scaled from the per-peer values)', () => {
  const l = networkLimitsOf(
    config([
      '--network-inbound-connection-burst=4',
      '--network-inbound-connection-cooldown=2s',
      '--network-max-handshaking-connections=10',
      '--network-handshake-timeout=3s',
      '--network-at-large-busy-share=0.1',
      '--network-at-large-max-requests-in-progress=2',
      '--network-at-large-reply-bytes-per-second=1000',
      '--network-validator-reply-bytes-per-second=5000',
    ]),
  );
  assert.equal([l.inboundPerIpBurst, l.inboundCooldownMs, l.maxHandshaking, l.handshakeTimeoutMs], [4, 2_000, 10, 3_000]);
  const b = l.requestBudget!;
  assert.equal([b.atLarge.busyShare, b.atLarge.maxInFlight, b.atLarge.replyBytesPerSecond, b.atLarge.replyBytesBurst], [0.1, 2, 1_000, 4_000]);
  assert.equal([b.atLargePool.busyShare, b.atLargePool.maxInFlight, b.atLargePool.replyBytesPerSecond], [0.2, 8, 2_000]);
  assert.equal([b.validator.replyBytesPerSecond, b.validator.replyBytesBurst, b.validator.busyShare], [5_000, 10_000, 1]);
  assert.is(networkLimitsOf(config(['--network-at-large-busy-share=0.8'])).requestBudget!.atLargePool.busyShare, 1);
});

test('validatorCheck: the primary network\'s current validators, followed when the platform chain replaces them', () => {
  const sets = new ValidatorSets([{ nodeId: node(1), weight: 1n }]);
  const check = validatorCheck(sets);
  assert.ok(check(node(1)));
  assert.not.ok(check(node(2)));
  sets.set(Id.empty, [{ nodeId: node(2), weight: 5n }]);
  assert.ok(check(node(2)));
  assert.not.ok(check(node(1)));
  sets.set(Id.fromBytes(new Uint8Array(32).fill(7)), [{ nodeId: node(3), weight: 1n }]);
  assert.not.ok(check(node(3)), 'a validator of another subnet only');
});

test.run();
