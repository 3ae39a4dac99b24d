/**
 * The messages between offload.ts and its worker thread (offload-worker.ts). Here, apart from both,
 * so the worker may import the precompiles' pure parts (kzg.ts, modexp.ts), which import offload.ts,
 * without an import circle.
 */

export type OffloadKind = 'pairing' | 'modexp' | 'blake2f' | 'kzg';

export interface OffloadJob {
  readonly seq: number;
  readonly kind: OffloadKind;
  readonly input: Uint8Array;
}

export type OffloadResult = { readonly seq: number; readonly output: Uint8Array } | { readonly seq: number; readonly failed: true; readonly error?: string };
