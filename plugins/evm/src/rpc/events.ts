/**
 * One subscription to the chain's streams (accepted blocks, admitted transactions), fanned out to
 * the filters and WebSocket subscriptions of this front end. A listener that throws is logged and
 * does not stop the others (rxjs would otherwise surface it later as an uncaught exception).
 */
import type { Logger } from '@cornice/sdk';
import type { AcceptedBlock, EvmBackend, TxView } from '../backend.js';

type Listener<T> = (value: T) => void;

export class ChainEvents {
  readonly #blocks = new Set<Listener<AcceptedBlock>>();
  readonly #pending = new Set<Listener<TxView>>();
  readonly #unsubscribe: Array<() => void> = [];

  constructor(
    backend: EvmBackend,
    private readonly log: Logger,
  ) {
    const blocks = backend.accepted$.subscribe({ next: (b) => this.#emit(this.#blocks, b), error: (e: unknown) => this.#ended('accepted', e) });
    const pending = backend.pending$.subscribe({ next: (t) => this.#emit(this.#pending, t), error: (e: unknown) => this.#ended('pending', e) });
    this.#unsubscribe.push(
      () => blocks.unsubscribe(),
      () => pending.unsubscribe(),
    );
  }

  /** Calls `listener` with each accepted block until the returned function is called. */
  onBlock(listener: Listener<AcceptedBlock>): () => void {
    this.#blocks.add(listener);
    return () => void this.#blocks.delete(listener);
  }

  /** Calls `listener` with each transaction admitted to the mempool until the returned function is called. */
  onPending(listener: Listener<TxView>): () => void {
    this.#pending.add(listener);
    return () => void this.#pending.delete(listener);
  }

  close(): void {
    for (const u of this.#unsubscribe.splice(0)) u();
    this.#blocks.clear();
    this.#pending.clear();
  }

  #emit<T>(listeners: Set<Listener<T>>, value: T): void {
    for (const l of listeners) {
      try {
        l(value);
      } catch (e) {
        this.log.warn('eth rpc event listener failed', { error: e });
      }
    }
  }

  #ended(stream: string, e: unknown): void {
    this.log.warn('eth rpc chain stream failed', { stream, error: e });
  }
}
