import { BlockBase, Id, type Block, type BlockHost as SdkBlockHost, type BlockStatus } from '@cornice/sdk';
import type { Block as EthBlock } from '@ethereumjs/block';
import type { Execution } from './chain/executor.js';

export type { BlockStatus } from '@cornice/sdk';

/** What a block asks of the chain that made it (the sdk's BlockHost). */
export type BlockHost = SdkBlockHost<EvmBlock>;

/**
 * A Snowman block wrapping an Ethereum block: id = the Ethereum block hash, parentId = parentHash,
 * height = number, bytes = the block's RLP.
 */
export class EvmBlock extends BlockBase<EvmBlock> implements Block {
  readonly id: Id;
  readonly parentId: Id;
  readonly height: number;
  readonly timestamp: number;
  readonly #bytes: Uint8Array;
  /** The execution result once verified (or built here): receipts, senders. */
  execution: Execution | undefined;

  constructor(
    host: BlockHost,
    readonly eth: EthBlock,
    bytes: Uint8Array,
    status: BlockStatus,
    execution?: Execution,
  ) {
    super(host, status);
    this.id = Id.fromBytes(eth.hash());
    this.parentId = Id.fromBytes(eth.header.parentHash);
    this.height = Number(eth.header.number);
    this.timestamp = Number(eth.header.timestamp);
    this.#bytes = bytes;
    this.execution = execution;
  }

  /** The block's RLP (a copy). */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** The block's RLP, not copied (read only). */
  get rawBytes(): Uint8Array {
    return this.#bytes;
  }

}
