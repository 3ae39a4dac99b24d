import { Id, type Block } from '@cornice/sdk';
import type { Block as EthBlock } from '@ethereumjs/block';
import type { Execution } from './chain/executor.js';

export type BlockStatus = 'processing' | 'accepted' | 'rejected';

/** What a block asks of the chain that made it. */
export interface BlockHost {
  verify(block: EvmBlock): Promise<void>;
  accept(block: EvmBlock): Promise<void>;
  reject(block: EvmBlock): Promise<void>;
}

/**
 * A Snowman block wrapping an Ethereum block: id = the Ethereum block hash, parentId = parentHash,
 * height = number, bytes = the block's RLP.
 */
export class EvmBlock implements Block {
  readonly id: Id;
  readonly parentId: Id;
  readonly height: number;
  readonly timestamp: number;
  readonly #bytes: Uint8Array;
  /** The execution result once verified (or built here): receipts, senders. */
  execution: Execution | undefined;
  status: BlockStatus;
  verified: boolean;

  constructor(
    private readonly host: BlockHost,
    readonly eth: EthBlock,
    bytes: Uint8Array,
    status: BlockStatus,
    execution?: Execution,
  ) {
    this.id = Id.fromBytes(eth.hash());
    this.parentId = Id.fromBytes(eth.header.parentHash);
    this.height = Number(eth.header.number);
    this.timestamp = Number(eth.header.timestamp);
    this.#bytes = bytes;
    this.status = status;
    this.execution = execution;
    this.verified = status === 'accepted';
  }

  /** The block's RLP (a copy). */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** The block's RLP, not copied (read only). */
  get rawBytes(): Uint8Array {
    return this.#bytes;
  }

  verify(): Promise<void> {
    return this.host.verify(this);
  }

  accept(): Promise<void> {
    return this.host.accept(this);
  }

  reject(): Promise<void> {
    return this.host.reject(this);
  }
}
