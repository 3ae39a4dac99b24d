/**
 * admin.memoryProfile's default: a V8 *sampling* heap profile (the inspector's HeapProfiler
 * startSampling/stopSampling). V8 records one allocation about every `samplingIntervalBytes` with
 * its stack while the window runs; the profile lists those still alive at its end, by stack. The
 * node keeps running meanwhile (the window is a timer, not a loop), and the result is small (a tree
 * of call sites), unlike a full heap snapshot, which stops the main thread for seconds on a large
 * heap and needs about the heap's size again in memory. Test: core/test/api/profiler.test.ts
 * "a sampling heap profile", test/e2e/api-abuse.test.ts "admin.memoryProfile does not freeze".
 */
import { Session } from 'node:inspector/promises';

/** Default, smallest and largest sampling window of admin.memoryProfile, ms. */
export const HEAP_SAMPLING_DEFAULT_MS = 5_000;
export const HEAP_SAMPLING_MIN_MS = 100;
export const HEAP_SAMPLING_MAX_MS = 60_000;
/** Bytes between two sampled allocations on average (V8's default). */
export const HEAP_SAMPLING_INTERVAL_BYTES = 32 * 1024;

/** Samples the heap for `durationMs`; resolves with the profile (Chrome DevTools' .heapprofile JSON). */
export async function sampleHeap(durationMs: number, wait: (ms: number) => Promise<void> = sleep): Promise<unknown> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: HEAP_SAMPLING_INTERVAL_BYTES });
    let profile: unknown;
    try {
      await wait(durationMs);
    } finally {
      // Stopped even when the wait was cut short: sampling must not outlive the call.
      ({ profile } = await session.post('HeapProfiler.stopSampling'));
    }
    return profile;
  } finally {
    session.disconnect();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
