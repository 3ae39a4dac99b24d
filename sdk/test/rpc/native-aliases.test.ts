import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defineService, method, nativeMethodAliases, p, result, withNativeAliasHandlers, withNativeAliases } from '../../src/index.js';

const def = defineService('x', {
  exportNATIVE: method({ params: p.none(), result: result<number>() }),
  importNATIVE: method({ params: p.none(), result: result<number>() }),
  other: method({ params: p.none(), result: result<number>() }),
});

test('every …NATIVE method is also declared and handled under the symbol', () => {
  assert.equal(Object.keys(withNativeAliases(def, 'AVA').methods).sort(), ['exportAVA', 'exportNATIVE', 'importAVA', 'importNATIVE', 'other']);
  assert.is(withNativeAliases(def, 'AVA').methods.exportAVA, def.methods.exportNATIVE);
  const handlers = withNativeAliasHandlers({ exportNATIVE: async () => 1, importNATIVE: async () => 2, other: async () => 3 }, 'AVA') as Record<string, () => Promise<number>>;
  assert.is(handlers.importAVA, handlers.importNATIVE);
  assert.equal(nativeMethodAliases('AVA'), ['exportAVA', 'importAVA']);
});

test('an unusable symbol (empty, NATIVE itself, not letters and digits, too long) adds nothing', () => {
  for (const symbol of ['', 'NATIVE', 'A.B', 'x'.repeat(17)]) {
    assert.is(Object.keys(withNativeAliases(def, symbol).methods).length, 3, symbol);
    assert.equal(nativeMethodAliases(symbol), []);
  }
});

test.run();
