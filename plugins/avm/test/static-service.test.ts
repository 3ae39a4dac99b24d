// avm.buildGenesis, the static service (/ext/vm/avm): results, and a clear error for every malformed call.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cb58Decode, hasErrorCode, isInvalidParamsError, toHex } from '@cornice/sdk';
import { sweepCases } from '@cornice/core/testing';
import { avmStaticApi, avmStaticService, buildGenesis } from '../src/index.js';

const method = avmStaticService().methods.get('avm.buildGenesis')!;
// As a request would carry them: JSON.
const call = (params: unknown) => method(JSON.parse(JSON.stringify(params))) as Promise<{ bytes: string }>;

const genesisData = {
  AVA: { name: 'AVA', symbol: 'AVA', denomination: 9, initialState: { fixedCap: [{ amount: '45000000000000000', address: '6Y3kysjF9jnHnYkdS9yGAuoHyae2eNmeV' }] } },
};

/** The error a call fails with (the test fails if it succeeds). */
const fails = (params: unknown): Promise<Error> =>
  call(params).then(
    (r) => assert.unreachable(`no error: ${JSON.stringify(r)}`) as never,
    (e: unknown) => e as Error,
  );

test('avm.buildGenesis: the cb58 of the genesis bytes; params as an object or a one-element array', async () => {
  const { bytes } = await call({ genesisData });
  assert.is(toHex(cb58Decode(bytes)), toHex(buildGenesis(genesisData)));
  assert.equal(await call({ genesisData }), await call([{ genesisData }]));
  assert.equal(await call({ genesisdata: genesisData }), { bytes }); // field names match case-insensitively
});

test('invalid params: -32602 (InvalidParams) naming the field; a genesis too large: InvalidGenesis', async () => {
  const named = async (params: unknown, field: string, text: string) => {
    const e = await fails(params);
    assert.ok(isInvalidParamsError(e), String(e));
    assert.ok(e.message.startsWith(`${field}: `), e.message);
    assert.match(e.message, text);
  };
  await named({}, 'genesisData', 'missing required field');
  assert.equal(await call({ genesisData, bogus: 1 }), await call({ genesisData }), 'an unknown field is ignored');
  await named({ genesisData: 'x' }, 'genesisData', 'expected an object but got string');
  await named({ genesisData: { AVA: { ...genesisData.AVA, initialState: { nonFungible: [] } } } }, 'genesisData.AVA.initialState.nonFungible', 'unknown asset type');
  await named({ genesisData: { AVA: { ...genesisData.AVA, denomination: 'nine' } } }, 'genesisData.AVA.denomination', 'expected a non-negative decimal integer');
  const holder = genesisData.AVA.initialState.fixedCap[0]!;
  const big = { initialState: { fixedCap: Array(4096).fill({ ...holder, amount: 1 }) } };
  const e = await fails({ genesisData: { a: big, b: big } });
  assert.ok(hasErrorCode(e, 'InvalidGenesis'), String(e));
});

test('every conformance sweep case gets a clear error naming the field (as rpcSweep checks over HTTP)', async () => {
  const problems: string[] = [];
  const cases = sweepCases(avmStaticApi);
  assert.ok(cases.length > 10);
  for (const c of cases) {
    try {
      await method(c.params);
      if (!c.mayPass) problems.push(`${c.label}: succeeded`);
    } catch (e) {
      if (c.expectField !== undefined && !(isInvalidParamsError(e) && (e as Error).message.startsWith(`${c.expectField}:`))) {
        problems.push(`${c.label}: ${String(e)}`);
      } else if (!hasErrorCode(e, 'InvalidParams')) {
        problems.push(`${c.label}: ${String(e)}`);
      }
    }
  }
  assert.equal(problems, []);
});

test.run();
