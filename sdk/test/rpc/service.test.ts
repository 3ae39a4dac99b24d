import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bindService, defineService, method, p, result, type Parser, type ServiceDef } from '../../src/index.js';

const r = result<{ ok: boolean }>();

test('a method whose params are not an object parser is refused when the service is defined', () => {
  const cases: Array<[Parser<unknown>, RegExp]> = [
    [p.string(), /declares params as string/],
    [p.uint64(), /declares params as uint64/],
    [p.array(p.object({ a: p.string() })), /declares params as array/],
    [p.id(), /declares params as id/],
  ];
  for (const [params, re] of cases) {
    assert.throws(
      () => defineService('svc', { good: method({ params: p.none(), result: r }), bad: method({ params, result: r }) }),
      (e: unknown) => e instanceof TypeError && /^service svc: method bad /.test(e.message) && re.test(e.message) && /p\.object/.test(e.message),
    );
  }
  for (const params of [undefined, null, {}, { kind: 'object' }]) {
    assert.throws(
      () => defineService('svc', { m: { params: params as unknown as Parser<object>, result: r } }),
      /service svc: method m has no params parser/,
    );
  }
});

test('object parsers are accepted: p.object, p.none, and an optional object', () => {
  const def = defineService('svc', {
    a: method({ params: p.object({ x: p.string() }), result: r }),
    b: method({ params: p.none(), result: r }),
    c: method({ params: p.optional(p.object({ x: p.string() })), result: r }),
  });
  assert.equal(Object.keys(def.methods), ['a', 'b', 'c']);
});

test('bindService refuses a declaration written by hand with non-object params', () => {
  const def = { name: 'raw', methods: { m: method({ params: p.string(), result: r }) } } as ServiceDef;
  assert.throws(() => bindService(def, { m: async () => ({ ok: true }) }), /service raw: method m declares params as string/);
});

test.run();
