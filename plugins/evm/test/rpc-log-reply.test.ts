/**
 * Log replies (src/rpc/log-reply.ts, format.ts): sized before they are built, and the text written
 * directly is the log object's JSON.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogView } from '../src/index.js';
import { logJson, logText } from '../src/rpc/format.js';
import { logJsonBound, logsReply } from '../src/rpc/log-reply.js';
import { ReplyBudget } from '../src/rpc/request.js';
import { TOKEN, filled } from './rpc-fake-backend.js';

test('logText is logJson\'s text', () => {
  const l: LogView = { address: TOKEN, topics: [filled(1), filled(2)], data: Uint8Array.of(0, 1, 255), blockNumber: 0x1234n, blockHash: filled(3), transactionHash: filled(4), transactionIndex: 7, logIndex: 300, removed: false };
  assert.is(logText(l), JSON.stringify(logJson(l)));
  const bare = { ...l, topics: [], data: new Uint8Array(0), blockNumber: 0n, transactionIndex: 0, logIndex: 0, removed: true };
  assert.is(logText(bare), JSON.stringify(logJson(bare)));
});

test('eth_getLogs replies are sized before they are built: -32003 without formatting a log', async () => {
  // Logs whose fields throw when read: only their sizes may be looked at.
  const untouchable = Array.from({ length: 1000 }, () => {
    const sized = { topics: [filled(1)], data: new Uint8Array(32) };
    return new Proxy(sized, {
      get(target, key) {
        if (key === 'topics' || key === 'data') return target[key];
        throw new Error(`log field ${String(key)} read`);
      },
    }) as unknown as LogView;
  });
  const budget = new ReplyBudget(100_000);
  const err = (await logsReply(untouchable, budget).catch((e: unknown) => e)) as { rpcCode: number; message: string };
  assert.equal([err.rpcCode, err.message], [-32003, 'response too large']);
  assert.is(budget.spent, 'size', 'the budget is spent: the rest of a batch is not run');
});

test('a log reply fits its bound, and is the logs\' JSON', async () => {
  const logs: LogView[] = Array.from({ length: 600 }, (_, i) => ({
    address: TOKEN,
    topics: [filled(1), filled(2), filled(3), filled(4)],
    data: new Uint8Array(i),
    blockNumber: (1n << 64n) - 1n,
    blockHash: filled(3),
    transactionHash: filled(4),
    transactionIndex: 0xffff_ffff,
    logIndex: 0xffff_ffff,
    removed: false,
  }));
  const text = (await logsReply(logs, new ReplyBudget(1e9))).text;
  assert.is(text, JSON.stringify(logs.map(logJson)));
  let bound = 2;
  for (const l of logs) bound += logJsonBound(l);
  assert.ok(text.length <= bound, `${text.length} <= ${bound}`);
});

test.run();
