import { BlockBase, type Block, type BlockHost as SdkBlockHost, type BlockStatus, type Id } from '@cornice/sdk';
import type { BlockFields } from './codec.js';
import { TimestampError } from './errors.js';

/** Where a block stands (the sdk's). Only accepted blocks are persisted. */
export type { BlockStatus } from '@cornice/sdk';

/** What a block asks of the VM that made it: its decisions (the sdk's BlockHost), and its parent's height. */
export interface BlockHost extends SdkBlockHost<TimestampBlock> {
  /** Height of a block held in memory (processing or recently accepted), if any. */
  knownHeight(id: Id): number | undefined;
}

/** A timestamp-chain block: a 32-byte payload and the time it was built. */
export class TimestampBlock extends BlockBase<TimestampBlock> implements Block {
  readonly id: Id;
  readonly parentId: Id;
  /** Unix seconds. */
  readonly timestamp: number;
  readonly #bytes: Uint8Array;
  readonly #data: Uint8Array;
  readonly #host: BlockHost;
  #height: number | undefined;

  constructor(host: BlockHost, id: Id, bytes: Uint8Array, fields: BlockFields, height: number | undefined, status: BlockStatus) {
    super(host, status);
    this.#host = host;
    this.id = id;
    this.#bytes = bytes;
    this.parentId = fields.parentId;
    this.#data = fields.data;
    this.timestamp = fields.timestamp;
    this.#height = height;
  }

  /** The 72 encoded bytes (a copy). */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** The 32-byte payload (a copy). */
  get data(): Uint8Array {
    return this.#data.slice();
  }

  /**
   * Parent's height + 1 (genesis 0). Known at once when the parent was known at parse time,
   * otherwise as soon as the parent is; until then TimestampError('UnknownParent').
   */
  get height(): number {
    if (this.#height === undefined) {
      const parent = this.#host.knownHeight(this.parentId);
      if (parent === undefined) {
        throw new TimestampError(
          'UnknownParent',
          `height of block ${this.id} is unknown until its parent ${this.parentId} is known`,
        );
      }
      this.#height = parent + 1;
    }
    return this.#height;
  }

  /** The height if already resolved, without looking at the parent (constant time). */
  get resolvedHeight(): number | undefined {
    return this.#height;
  }

  /** The height if known now, without throwing. */
  get heightIfKnown(): number | undefined {
    if (this.#height === undefined) {
      const parent = this.#host.knownHeight(this.parentId);
      if (parent !== undefined) this.#height = parent + 1;
    }
    return this.#height;
  }

  /** @internal Called by the VM. */
  markVerified(height: number): void {
    this.#height = height;
    this.verified = true;
  }

  /** @internal Called by the VM once the decision is durable. */
  markDecided(status: 'accepted' | 'rejected', height?: number): void {
    this.status = status;
    if (height !== undefined) this.#height = height;
  }
}
