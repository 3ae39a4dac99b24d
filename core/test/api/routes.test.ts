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

const isCode = (code: string) => (e: unknown) => e instanceof RouteError && e.code === code;

/** A node's table: admin, keystore, the C-Chain's rpc/ws under its ID with the endpoint alias C, the X-Chain. */
function nodeTable(dropped: string[] = []): { routes: RouteTable; rpc: Route; ks: Route } {
  const chains = new Map([['C', 'cid'], ['X', 'xid']]);
  const routes = new RouteTable({ resolve: (a) => chains.get(a) ?? (a === 'cid' || a === 'xid' ? a : undefined) }, {
    maxAdminAliases: 3,
    onAdminAliasDropped: (alias) => dropped.push(alias),
  });
  const rpc = http();
  const ks = http();
  routes.mount('admin', http());
  routes.mount('keystore', ks);
  routes.mount('bc/cid/rpc', rpc);
  routes.mount('bc/cid/ws', { kind: 'websocket', accept: () => undefined });
  routes.mount('bc/xid', http());
  routes.mount('bc/P', http());
  return { routes, rpc, ks };
}

test('admin aliases never shadow a route: not under bc/ or vm/, not a prefix of a route, not under one (issue 32, point 3)', () => {
  const { routes, rpc } = nodeTable();
  // The reported hijacks: "bc" over every chain, "bc/C/rpc" onto the keystore.
  assert.throws(() => routes.addAdminAlias('admin', 'bc'), isCode('Reserved'));
  assert.throws(() => routes.addAdminAlias('keystore', 'bc/C/rpc'), isCode('Reserved'));
  assert.throws(() => routes.addAdminAlias('keystore', 'vm/avm'), isCode('Reserved'));
  assert.is(routes.lookup('bc/C/rpc'), rpc);
  // Equal to, a prefix of, or under a mounted path or another alias.
  routes.mount('ext/deep/path', http());
  assert.throws(() => routes.addAdminAlias('keystore', 'admin'), (e: unknown) => isCode('AliasTaken')(e) && /is already in use/.test((e as Error).message));
  assert.throws(() => routes.addAdminAlias('keystore', 'ext/deep'), (e: unknown) => isCode('AliasTaken')(e) && /would shadow \/ext\/ext\/deep\/path/.test((e as Error).message));
  assert.throws(() => routes.addAdminAlias('keystore', 'admin/x'), (e: unknown) => isCode('AliasTaken')(e) && /lies under \/ext\/admin/.test((e as Error).message));
  routes.addAdminAlias('admin', 'myadmin');
  assert.throws(() => routes.addAdminAlias('keystore', 'myadmin/sub'), isCode('AliasTaken'));
  assert.throws(() => routes.addAdminAlias('keystore', 'myadmin'), isCode('AliasTaken'));
  // A prefix that is not a whole segment is not a prefix: "adm" and "admins" are free.
  routes.addAdminAlias('keystore', 'admins');
  assert.is(routes.lookup('admins'), routes.lookup('keystore'));
});

test('admin aliases are bounded and removable; the node\'s own aliases are not removable', () => {
  const { routes, ks } = nodeTable();
  routes.alias('bc/cid', 'C');
  routes.addAdminAlias('keystore', 'a');
  routes.addAdminAlias('a', 'b'); // an alias of an alias points at the route
  routes.addAdminAlias('bc/C', 'c-chain');
  assert.equal(routes.adminAliases(), [
    { alias: 'a', endpoint: 'keystore' },
    { alias: 'b', endpoint: 'keystore' },
    { alias: 'c-chain', endpoint: 'bc/cid' },
  ]);
  assert.is(routes.lookup('b'), ks);
  assert.is(routes.lookup('c-chain/rpc'), routes.lookup('bc/cid/rpc'));
  assert.throws(
    () => routes.addAdminAlias('keystore', 'd'),
    (e: unknown) => isCode('TooManyAliases')(e) && /at most 3 aliases .*--api-admin-max-aliases.*admin\.removeAlias/.test((e as Error).message),
  );
  routes.removeAdminAlias('a');
  assert.is(routes.lookup('a'), undefined);
  assert.is(routes.lookup('b'), ks, 'b pointed at the route, not at a');
  routes.addAdminAlias('keystore', 'd');
  assert.throws(() => routes.removeAdminAlias('C'), (e: unknown) => isCode('NoSuchAlias')(e) && /not an alias added with admin\.alias/.test((e as Error).message));
  assert.throws(() => routes.removeAdminAlias('keystore'), (e: unknown) => isCode('NoSuchAlias')(e) && /is not an alias$/.test((e as Error).message));
  assert.throws(() => routes.removeAdminAlias('nothing'), isCode('NoSuchAlias'));
  assert.ok(routes.lookup('C/rpc'));
});

test("the node's own paths win: a later mount or alias drops an overlapping admin alias", () => {
  const dropped: string[] = [];
  const { routes } = nodeTable(dropped);
  routes.addAdminAlias('admin', 'X');
  routes.addAdminAlias('admin', 'ipcs');
  // The X-Chain's endpoint alias arrives after (chains start behind the API): it takes /ext/X.
  routes.alias('bc/xid', 'X');
  assert.is(routes.lookup('X'), routes.lookup('bc/xid'));
  routes.mount('ipcs/sub', http());
  assert.equal(dropped, ['X', 'ipcs']);
  assert.equal(routes.adminAliases(), []);
});

test.run();
