import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MEMORY_PROFILE_BUSY, Profiler, ProfilerError, type ProfilerOptions } from '../../src/api/admin/profiler.js';

let dir: string;
test.before.each(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cornice-profiles-'));
});
test.after.each(() => rm(dir, { recursive: true, force: true }));

/** The profile files in the directory (the profiler's own index excluded). */
const files = async () => (await readdir(dir)).filter((f) => !f.startsWith('.')).sort();

/** Runs `fn` with a profiler keeping `maxFiles` files, closed afterwards. */
async function withProfiler(maxFiles: number, fn: (p: Profiler) => Promise<void>, opts: ProfilerOptions = { heapSnapshots: true }): Promise<void> {
  const p = new Profiler(dir, { maxFiles, ...opts });
  try {
    await fn(p);
  } finally {
    await p.close();
  }
}

test('at most maxFiles profiles are kept: writing another deletes the oldest', async () => {
  await withProfiler(3, async (p) => {
    for (let i = 1; i <= 5; i++) await p.lockReport(`lock${i}.json`);
    assert.equal(await files(), ['lock3.json', 'lock4.json', 'lock5.json']);
    // Rewriting a kept name makes it the newest without counting twice.
    await p.lockReport('lock3.json');
    await p.lockReport('lock6.json');
    assert.equal(await files(), ['lock3.json', 'lock5.json', 'lock6.json']);
  });
});

test('heap snapshots and CPU profiles count too', async () => {
  await withProfiler(2, async (p) => {
    await p.heapSnapshot('a.heapsnapshot');
    await p.startCpu('b.cpuprofile');
    await p.stopCpu();
    await p.lockReport('c.json');
    assert.equal(await files(), ['b.cpuprofile', 'c.json']);
    await p.heapSnapshot('d.heapsnapshot');
    assert.equal(await files(), ['c.json', 'd.heapsnapshot']);
  });
});

test('a sampling heap profile: written as .heapprofile JSON; one memory profile at a time (issue 32, point 8)', async () => {
  let release!: () => void;
  const opened = new Promise<void>((r) => (release = r));
  await withProfiler(
    5,
    async (p) => {
      const first = p.heapSampling('a.heapprofile', 1_000);
      // While it samples, another sampling or snapshot is refused, not queued.
      await new Promise((r) => setTimeout(r, 20));
      for (const other of [p.heapSampling('b.heapprofile', 10), p.heapSnapshot('c.heapsnapshot')]) {
        try {
          await other;
          assert.unreachable('refused');
        } catch (e) {
          assert.instance(e, ProfilerError);
          assert.is((e as ProfilerError).code, 'AlreadyRunning');
          assert.is((e as Error).message, MEMORY_PROFILE_BUSY);
        }
      }
      release();
      await first;
      const profile = JSON.parse(await readFile(join(dir, 'a.heapprofile'), 'utf8'));
      assert.ok(profile.head?.callFrame, 'a call tree');
      assert.ok(Array.isArray(profile.samples));
      // Free again once done.
      await p.heapSampling('d.heapprofile', 10);
      assert.equal(await files(), ['a.heapprofile', 'd.heapprofile']);
    },
    { heapSnapshots: true, wait: (ms) => (ms === 1_000 ? opened : new Promise((r) => setTimeout(r, ms))) },
  );
});

test('full heap snapshots are refused unless enabled', async () => {
  await withProfiler(
    5,
    async (p) => {
      try {
        await p.heapSnapshot('x.heapsnapshot');
        assert.unreachable('refused');
      } catch (e) {
        assert.is((e as ProfilerError).code, 'Disabled');
        assert.match((e as Error).message, /--profile-heap-snapshot-enabled/);
      }
      assert.equal(await files(), []);
    },
    {},
  );
});

test('files the profiler did not write are never deleted', async () => {
  await writeFile(join(dir, 'notes.txt'), 'mine');
  await withProfiler(1, async (p) => {
    await p.lockReport('one.json');
    await p.lockReport('two.json');
    assert.equal(await files(), ['notes.txt', 'two.json']);
  });
});

test('the bound holds across restarts', async () => {
  const first = new Profiler(dir, { maxFiles: 2 });
  await first.lockReport('a.json');
  await first.lockReport('b.json');
  await first.close();
  await withProfiler(2, async (second) => {
    await second.lockReport('c.json');
    assert.equal(await files(), ['b.json', 'c.json']);
  });
});

test('concurrent writes still keep the bound', async () => {
  await withProfiler(4, async (p) => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => p.lockReport(`l${String(i).padStart(2, '0')}.json`)));
    assert.is((await files()).length, 4);
  });
});

test("the profiler's index cannot be overwritten through a file name", async () => {
  await withProfiler(2, async (p) => {
    await p.lockReport('x.json');
    const index = (await readdir(dir)).find((f) => f.startsWith('.'));
    assert.ok(index, 'an index file exists');
    try {
      await p.lockReport(index!);
      assert.unreachable('refused');
    } catch (e) {
      assert.instance(e, ProfilerError);
      assert.match((e as Error).message, /reserved/);
    }
  });
});

test.run();
