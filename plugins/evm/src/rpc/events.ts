/**
 * One subscription to each of the chain's streams (accepted blocks, admitted transactions), fanned
 * out to the filters and WebSocket subscriptions of this front end, and held only while one of them
 * listens: the chain makes a stream's views (a block's, its receipts', a pooled tx's) only when the
 * stream is observed. A listener that throws is logged and does not stop the others (rxjs would
 * otherwise surface it later as an uncaught exception).
 */
import type { Logger } from '@cornice/sdk';
import type { Observable, Subscription } from 'rxjs';
import type { AcceptedBlock, EvmBackend, TxView } from '../evm-backend.js';

type Listener<T> = (value: T) => void;

/** The listeners of one stream, and the stream's subscription while there is any. */
class Fanout<T> {
  readonly #listeners = new Set<Listener<T>>();
  #subscription: Subscription | undefined;

  constructor(
    private readonly stream: Observable<T>,
    private readonly name: string,
    private readonly log: Logger,
  ) {}

  add(listener: Listener<T>): () => void {
    this.#listeners.add(listener);
    this.#subscription ??= this.stream.subscribe({
      next: (value) => this.#emit(value),
      error: (e: unknown) => this.log.warn('eth rpc chain stream failed', { stream: this.name, error: e }),
    });
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.close();
    };
  }

  close(): void {
    this.#listeners.clear();
    this.#subscription?.unsubscribe();
    this.#subscription = undefined;
  }

  #emit(value: T): void {
    for (const l of this.#listeners) {
      try {
        l(value);
      } catch (e) {
        this.log.warn('eth rpc event listener failed', { error: e });
      }
    }
  }
}

export class ChainEvents {
  readonly #blocks: Fanout<AcceptedBlock>;
  readonly #pending: Fanout<TxView>;

  constructor(backend: EvmBackend, log: Logger) {
    this.#blocks = new Fanout(backend.accepted$, 'accepted', log);
    this.#pending = new Fanout(backend.pending$, 'pending', log);
  }

  /** Calls `listener` with each accepted block until the returned function is called. */
  onBlock(listener: Listener<AcceptedBlock>): () => void {
    return this.#blocks.add(listener);
  }

  /** Calls `listener` with each transaction admitted to the mempool until the returned function is called. */
  onPending(listener: Listener<TxView>): () => void {
    return this.#pending.add(listener);
  }

  close(): void {
    this.#blocks.close();
    this.#pending.close();
  }
}
