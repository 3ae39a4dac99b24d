import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serializer } from '../../src/index.js';

test('steps run one after another in call order; a throwing step fails its own caller only', async () => {
  const serial = serializer();
  const log: string[] = [];
  const step = (name: string, fail = false) => async () => {
    log.push(`start ${name}`);
    await new Promise((r) => setImmediate(r));
    log.push(`end ${name}`);
    if (fail) throw new Error(name);
    return name;
  };
  const results = await Promise.allSettled([serial(step('a')), serial(step('b', true)), serial(step('c'))]);
  assert.equal(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  assert.equal(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['a', 'b', 'c']);
});

test.run();
