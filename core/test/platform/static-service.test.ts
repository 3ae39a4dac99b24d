import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Id, cb58Decode, cb58Encode, hasErrorCode, isInvalidParamsError, vmIdFromName } from '@cornice/sdk';
import { txId } from '../../src/platform/codec.js';
import { decodeGenesis } from '../../src/platform/genesis.js';
import { BUILD_GENESIS_LIMITS, platformStaticApi, platformStaticService } from '../../src/platform/static-service.js';
import { sweepCases } from '../../src/testing/sweep.js';
import { genesisChainId } from '../../src/platform/genesis.js';
import { plain, shortId } from './samples.js';

const buildGenesis = platformStaticService().methods.get('platform.buildGenesis')!;
// As a request would carry them: JSON (undefined fields drop out).
const call = (params: unknown) => buildGenesis(JSON.parse(JSON.stringify(params))) as Promise<{ bytes: string }>;

const A = shortId('a').toString();
const N1 = shortId('n1').toString();
const N2 = shortId('n2').toString();
const timestampVm = vmIdFromName('timestamp').toString();

function args(over: Record<string, unknown> = {}) {
  return {
    address: 12345,
    accounts: [{ address: A, balance: '20000000000000' }],
    defaultSubnetValidators: [
      { startTime: 1_572_566_400, endTime: 1_604_102_400, stakeAmount: '20000000000000', id: N1, destination: A, delegationFeeRate: 0 },
      { startTime: 1_572_566_400, endTime: 1_600_000_000, weight: 10_000, id: N2, destination: A, delegationFeeRate: 250_000 },
    ],
    chains: [{ genesisData: cb58Encode(new Uint8Array(0)), vmID: timestampVm, fxIDs: [], name: 'Simple Timestamp Server', subnetID: Id.empty.toString() }],
    time: 1_572_566_400,
    ...over,
  };
}

async function fails(params: unknown): Promise<Error> {
  try {
    await call(params);
  } catch (e) {
    return e as Error;
  }
  assert.unreachable('no error');
  throw new Error('unreachable');
}

async function invalidParams(params: unknown, field: string, text?: string): Promise<void> {
  const e = await fails(params);
  assert.ok(isInvalidParamsError(e), `${field}: ${String(e)}`);
  assert.ok(e.message.startsWith(`${field}: `), e.message);
  if (text) assert.match(e.message, text);
}

test('buildGenesis round trip: decodeGenesis gives back the accounts, validators (by end time), chains and time', async () => {
  const { bytes } = await call(args());
  const g = decodeGenesis(cb58Decode(bytes));
  assert.is(g.timestamp, 1_572_566_400);
  assert.equal(plain(g.accounts), plain([{ address: shortId('a'), nonce: 0n, balance: 20_000_000_000_000n }]));
  // Sorted by end time: n2 (1600000000) before n1.
  assert.equal(g.validators.map((v) => v.nodeId.toString()), [N2, N1]);
  assert.equal(plain(g.validators[0]), plain({
    kind: 'addDefaultSubnetValidator',
    nodeId: shortId('n2'),
    weight: 10_000n,
    start: 1_572_566_400,
    end: 1_600_000_000,
    networkId: 12345,
    nonce: 0n,
    destination: shortId('a'),
    shares: 250_000,
    sig: new Uint8Array(65),
  }));
  assert.is(g.validators[1]!.weight, 20_000_000_000_000n);
  assert.is(g.chains.length, 1);
  // The chain is the reference's genesis chain: its ID is the timestamp chain's local ID.
  assert.is(txId(g.chains[0]!).toString(), '2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX');
});

test('networkID is accepted as well as the reference\'s `address`; defaults: no accounts, validators or chains', async () => {
  const { bytes } = await call({ networkID: 5, time: 0 });
  assert.equal(plain(decodeGenesis(cb58Decode(bytes))), plain({ accounts: [], validators: [], chains: [], timestamp: 0 }));
  const a = await call({ ...args(), address: undefined, networkID: 12345 });
  assert.is(a.bytes, (await call(args())).bytes);
  // Omitted optional chain fields: empty genesis, no Fxs, the Default Subnet.
  const c = await call({ networkID: 12345, time: 0, chains: [{ vmID: timestampVm, name: 'Simple Timestamp Server' }] });
  const chain = decodeGenesis(cb58Decode(c.bytes)).chains[0]!;
  assert.is(txId(chain).toString(), genesisChainId(12345, { name: 'Simple Timestamp Server', subnetId: Id.empty, vmId: vmIdFromName('timestamp'), fxIds: [], genesis: new Uint8Array() }).toString());
  // A given nonce is ignored, as the reference: genesis accounts start at 0.
  const n = await call({ ...args(), accounts: [{ address: A, balance: 5, nonce: 9 }] });
  assert.is(decodeGenesis(cb58Decode(n.bytes)).accounts[0]!.nonce, 0n);
});

test('the reference\'s errors: an account with no value; a validator that would have already unstaked', async () => {
  const domain = async (params: unknown, text: string) => {
    const e = await fails(params);
    assert.ok(hasErrorCode(e, 'InvalidGenesis'), String(e));
    assert.is(e.message, text);
  };
  await domain(args({ accounts: [{ address: A, balance: 0 }] }), 'account has no value');
  const v = args().defaultSubnetValidators[1]!;
  await domain(args({ defaultSubnetValidators: [{ ...v, weight: 0 }] }), 'validator would have already unstaked');
  await domain(args({ defaultSubnetValidators: [{ ...v, weight: undefined }] }), 'validator would have already unstaked');
  await domain(args({ defaultSubnetValidators: [{ ...v, endTime: 1_572_566_400 }] }), 'validator would have already unstaked');
  await domain(args({ defaultSubnetValidators: [{ ...v, endTime: 1_572_566_399 }] }), 'validator would have already unstaked');
});

test('invalid inputs get -32602 naming the field', async () => {
  const v = args().defaultSubnetValidators[1]!;
  const c = args().chains[0]!;
  await invalidParams({ time: 0 }, 'address', 'missing required field');
  await invalidParams(args({ networkID: 1 }), 'networkID', 'differs from address');
  await invalidParams(args({ address: 2 ** 32 }), 'address', 'overflowed uint32');
  await invalidParams(args({ time: -1 }), 'time');
  await invalidParams(args({ accounts: [{ address: 'nope', balance: 1 }] }), 'accounts[0].address');
  await invalidParams(args({ accounts: [{ address: A, balance: '18446744073709551616' }] }), 'accounts[0].balance', 'overflowed uint64');
  await invalidParams(args({ accounts: Array(BUILD_GENESIS_LIMITS.accounts + 1).fill({ address: A, balance: 1 }) }), 'accounts', 'at most 4096 items');
  await invalidParams(args({ defaultSubnetValidators: [{ ...v, weight: 5, stakeAmount: 6 }] }), 'defaultSubnetValidators[0].stakeAmount', 'differs from weight');
  await invalidParams(args({ defaultSubnetValidators: [{ ...v, delegationFeeRate: 1_000_001 }] }), 'defaultSubnetValidators[0].delegationFeeRate', 'at most 1000000');
  await invalidParams(args({ defaultSubnetValidators: [{ ...v, id: undefined }] }), 'defaultSubnetValidators[0].id', 'missing required field');
  await invalidParams(args({ defaultSubnetValidators: [{ ...v, endTime: 2 ** 53 }] }), 'defaultSubnetValidators[0].endTime');
  await invalidParams(args({ chains: [{ ...c, vmID: 'timestamp' }] }), 'chains[0].vmID', 'must be a cb58 vmID; VM aliases are not known to a static service');
  await invalidParams(args({ chains: [{ ...c, vmID: 'x'.repeat(65) }] }), 'chains[0].vmID', 'at most 64 characters');
  await invalidParams(args({ chains: [{ ...c, name: 'n'.repeat(129) }] }), 'chains[0].name', 'at most 128 characters');
  await invalidParams(args({ chains: [{ ...c, fxIDs: Array(33).fill(timestampVm) }] }), 'chains[0].fxIDs', 'at most 32 items');
  await invalidParams(args({ chains: [{ ...c, fxIDs: ['avm'] }] }), 'chains[0].fxIDs[0]');
  await invalidParams(args({ chains: [{ ...c, subnetID: 'x' }] }), 'chains[0].subnetID');
  await invalidParams(args({ chains: [{ ...c, genesisData: 'z'.repeat(100_000) }] }), 'chains[0].genesisData', 'must be at most');
  await invalidParams(args({ chains: [{ ...c, genesisData: cb58Encode(new Uint8Array(64 * 1024 + 1)) }] }), 'chains[0].genesisData');
  await invalidParams(args({ chains: Array(65).fill(c) }), 'chains', 'at most 64 items');
  assert.equal(await call(args({ bogus: 1, chains: [{ ...c, bogus: 2 }] })), await call(args()), 'unknown fields are ignored');
});

test('a genesis over 256 KiB as a whole is refused with a clear error', async () => {
  const big = cb58Encode(new Uint8Array(60 * 1024));
  const c = { vmID: timestampVm, name: 'big', genesisData: big };
  const e = await fails({ networkID: 1, time: 0, chains: [c, c, c, c, c] });
  assert.ok(hasErrorCode(e, 'Malformed'), String(e));
  assert.match(e.message, 'larger than the limit of 262144 bytes');
});

test('every conformance sweep case gets a clear error naming the field (as rpcSweep checks over HTTP)', async () => {
  const problems: string[] = [];
  for (const c of sweepCases(platformStaticApi)) {
    try {
      await buildGenesis(c.params);
      if (!c.mayPass) problems.push(`${c.label}: succeeded`);
    } catch (e) {
      if (c.expectField !== undefined && !(isInvalidParamsError(e) && (e as Error).message.startsWith(`${c.expectField}:`))) {
        problems.push(`${c.label}: ${String(e)}`);
      } else if (!hasErrorCode(e, 'InvalidParams') && !hasErrorCode(e, 'InvalidGenesis')) {
        problems.push(`${c.label}: ${String(e)}`);
      }
    }
  }
  assert.equal(problems, []);
});

test.run();
