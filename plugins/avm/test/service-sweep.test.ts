import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { maxSizeCases, postRpc, rpcSweep, sweepCases } from '@cornice/core/testing';
import { avmApi, avmApiWithSymbol } from '../src/api.js';
import { EWOQ, served } from './fake-backend.js';

test('the declaration: service avm; the native-token methods also under the symbol', () => {
  assert.is(avmApi.name, 'avm');
  assert.equal(Object.keys(avmApi.methods).sort(), [
    'createAddress',
    'createFixedCapAsset',
    'createMintTx',
    'createVariableCapAsset',
    'exportKey',
    'exportNATIVE',
    'getAllBalances',
    'getAssetDescription',
    'getBalance',
    'getTx',
    'getTxStatus',
    'getUTXOs',
    'importKey',
    'importNATIVE',
    'issueTx',
    'listAddresses',
    'send',
    'signMintTx',
  ]);
  const withAva = avmApiWithSymbol('AVA').methods;
  assert.is(withAva.exportAVA, avmApi.methods.exportNATIVE);
  assert.is(withAva.importAVA, avmApi.methods.importNATIVE);
  // No aliases for a symbol that cannot be a method name, nor for NATIVE itself.
  for (const symbol of ['NATIVE', 'a-b', '', 'x'.repeat(17)]) assert.is(Object.keys(avmApiWithSymbol(symbol).methods).length, 18, symbol);
});

test('every avm method (aliases included) answers every malformed call with a clear error (-32602 naming the field), never -32603', served(async (h) => {
  await h.user('bob', [EWOQ]);
  const def = avmApiWithSymbol('AVA');
  const cases = sweepCases(def);
  assert.ok(cases.length > 300, `${cases.length} cases`);
  assert.equal(await rpcSweep(h.url, [def]), []);
  assert.equal(h.backend.issued, []);
}));

test('every string field at its largest is refused quickly with -32602 (bounded before decoding)', served(async (h) => {
  const cases = maxSizeCases(avmApiWithSymbol('AVA'));
  let worst = 0;
  for (const c of cases) {
    const t0 = performance.now();
    const r = await postRpc(h.url, c.method, c.params);
    worst = Math.max(worst, performance.now() - t0);
    assert.is(r.error?.code, -32602, `${c.method} ${c.label}: ${JSON.stringify(r.error ?? r.result).slice(0, 200)}`);
  }
  assert.ok(cases.length > 40, `${cases.length} cases`);
  assert.ok(worst < 1000, `slowest ${worst.toFixed(0)} ms`);
}));

test.run();
