import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RouteError, RouteTable, type Route } from '../../src/api/routes.js';

const http = (): Route => ({ kind: 'http', handle: () => undefined });

test('an endpoint alias may name a chain that serves only sub-paths (an EVM chain: rpc and ws)', () => {
  const routes = new RouteTable();
  const rpc = http();
  routes.mount('bc/abc/rpc', rpc);
  routes.mount('bc/abc/ws', { kind: 'websocket', accept: () => undefined });
  routes.alias('bc/abc', 'C');
  assert.is(routes.lookup('C/rpc'), rpc);
  assert.is(routes.lookup('C/ws')?.kind, 'websocket');
  assert.is(routes.lookup('C'), undefined);
});

test('an alias of nothing mounted is refused, a prefix of a name is not a sub-path', () => {
  const routes = new RouteTable();
  routes.mount('bc/abcd/rpc', http());
  assert.throws(() => routes.alias('bc/abc', 'C'), (e: unknown) => e instanceof RouteError && e.code === 'NoSuchEndpoint');
  assert.throws(() => routes.alias('bc/nothing', 'D'), (e: unknown) => e instanceof RouteError && e.code === 'NoSuchEndpoint');
});

test.run();
