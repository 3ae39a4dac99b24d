/**
 * IPC publishing (API.md beside this file): the accepted blocks of a chain, streamed to any local process
 * over a Unix domain socket at `<dir>/<chainID cb58>.ipc`.
 *
 * Wire format: one frame per accepted block, in acceptance order — a u32 big-endian length followed
 * by the block's raw bytes. A reader gets the blocks accepted while it is connected; there is no
 * replay. Publishing never waits for readers: a reader that has more than `maxBufferedBytes` not yet
 * taken off its socket when a block arrives is disconnected (and logged), so a stalled reader costs
 * at most that much memory and never slows consensus.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { lstat, mkdir, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Observable, Subscription } from 'rxjs';
import type { Id, Logger } from '@cornice/sdk';
import { IpcError } from './errors.js';

/** What a chain emits when it accepts a block. */
export interface AcceptedBlock {
  id: Id;
  height: number;
  bytes: Uint8Array;
}

/** A chain that can be published: its ID and the stream of the blocks it accepts. */
export interface PublishableChain {
  chainId: Id;
  accepted$: Observable<AcceptedBlock>;
}

/** Finds a chain by alias or cb58 ID (the chain manager implements it). */
export interface ChainLookup {
  resolve(aliasOrId: string): PublishableChain | undefined;
}

export interface IpcPublisherOptions {
  /** Directory of the sockets (`--ipcs-path`); created when missing. */
  dir: string;
  chains: ChainLookup;
  log: Logger;
  /** Per reader: bytes written but not yet taken by the reader before it is dropped. Default 8 MiB. */
  maxBufferedBytes?: number;
}

export const DEFAULT_IPC_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** The largest block a frame can carry (the length prefix is a u32). */
const MAX_FRAME_PAYLOAD = 0xffff_ffff;

interface Channel {
  readonly chainId: Id;
  readonly path: string;
  readonly url: string;
  readonly server: Server;
  readonly readers: Set<Socket>;
  subscription?: Subscription;
  /** Set once the channel is being shut down. */
  stopped?: Promise<void>;
  /** The map entry this channel was opened for. */
  readonly entry: Entry;
}

interface Entry {
  ready: Promise<Channel>;
}

const errorCode = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;
const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Publishes the accepted blocks of chains over Unix domain sockets (one socket per chain). */
export class IpcPublisher {
  readonly #dir: string;
  readonly #chains: ChainLookup;
  readonly #log: Logger;
  readonly #maxBuffered: number;
  /** chain key -> published (or being published) channel */
  readonly #channels = new Map<string, Entry>();
  /** chain key -> a shutdown in progress; a new publish of that chain waits for it */
  readonly #closing = new Map<string, Promise<void>>();
  #closed = false;

  constructor(opts: IpcPublisherOptions) {
    this.#dir = resolve(opts.dir);
    this.#chains = opts.chains;
    this.#log = opts.log;
    this.#maxBuffered = opts.maxBufferedBytes ?? DEFAULT_IPC_MAX_BUFFERED_BYTES;
  }

  /** Starts publishing a chain (by alias or ID); returns `ipc://<socket path>`. Idempotent. */
  async publish(aliasOrId: string): Promise<string> {
    if (this.#closed) throw new IpcError('Closed', 'the IPC publisher is closed');
    const chain = this.#lookup(aliasOrId);
    const key = chain.chainId.key;
    let entry = this.#channels.get(key);
    if (!entry) {
      const e: Entry = { ready: undefined as unknown as Promise<Channel> };
      e.ready = this.#open(chain, e);
      e.ready.catch(() => {
        if (this.#channels.get(key) === e) this.#channels.delete(key);
      });
      this.#channels.set(key, e);
      entry = e;
    }
    return (await entry.ready).url;
  }

  /** Stops publishing a chain: disconnects its readers and removes its socket file. */
  async unpublish(aliasOrId: string): Promise<void> {
    const chain = this.#lookup(aliasOrId);
    const key = chain.chainId.key;
    const entry = this.#channels.get(key);
    const notPublishing = () => new IpcError('NotPublishing', `blockchainID not publishing: ${chain.chainId.toString()}`);
    if (!entry) throw notPublishing();
    this.#channels.delete(key);
    let channel: Channel;
    try {
      channel = await entry.ready;
    } catch {
      throw notPublishing();
    }
    await this.#shutdown(channel);
  }

  /** Unpublishes every chain and removes the socket files; later publish calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#channels.values()];
    this.#channels.clear();
    await Promise.all(
      entries.map((e) =>
        e.ready.then(
          (ch) => this.#shutdown(ch),
          () => undefined,
        ),
      ),
    );
    await Promise.all(this.#closing.values());
  }

  #lookup(aliasOrId: string): PublishableChain {
    const chain = this.#chains.resolve(aliasOrId);
    if (!chain) throw new IpcError('UnknownChain', `there is no ID with alias ${aliasOrId.slice(0, 128)}`);
    return chain;
  }

  async #open(chain: PublishableChain, entry: Entry): Promise<Channel> {
    const key = chain.chainId.key;
    const cb58 = chain.chainId.toString();
    // A previous socket of this chain may still be closing (libuv unlinks the path on close).
    await this.#closing.get(key);
    const path = join(this.#dir, `${cb58}.ipc`);
    try {
      await mkdir(this.#dir, { recursive: true });
    } catch (e) {
      throw new IpcError('Listen', `cannot create the IPC directory ${this.#dir}: ${errorMessage(e)}`);
    }
    await this.#removeStale(path);

    const server = createServer();
    const channel: Channel = { chainId: chain.chainId, path, url: `ipc://${path}`, server, readers: new Set(), entry };
    server.on('connection', (socket) => this.#addReader(channel, socket));
    await new Promise<void>((res, rej) => {
      const onError = (e: Error) => rej(new IpcError('Listen', `cannot listen on ${path}: ${e.message}`));
      server.once('error', onError);
      server.listen(path, () => {
        server.off('error', onError);
        res();
      });
    });
    server.on('error', (e) => this.#log.error('ipc socket error', { chainId: cb58, path, error: e.message }));

    channel.subscription = chain.accepted$.subscribe({
      next: (block) => this.#send(channel, block),
      error: (e: unknown) => {
        this.#log.warn('ipc chain stream failed; unpublishing', { chainId: cb58, error: errorMessage(e) });
        this.#retire(channel);
      },
      complete: () => {
        this.#log.info('ipc chain stream ended; unpublishing', { chainId: cb58 });
        this.#retire(channel);
      },
    });
    this.#log.info('ipc publishing chain', { chainId: cb58, url: channel.url });
    return channel;
  }

  /** Removes a socket file left by a process that is gone; refuses a live socket or a non-socket. */
  async #removeStale(path: string): Promise<void> {
    let isSocket: boolean;
    try {
      isSocket = (await lstat(path)).isSocket();
    } catch (e) {
      if (errorCode(e) === 'ENOENT') return;
      throw new IpcError('Listen', `cannot inspect ${path}: ${errorMessage(e)}`);
    }
    if (!isSocket) throw new IpcError('Listen', `cannot listen on ${path}: the path exists and is not a socket`);
    const live = await new Promise<boolean>((res) => {
      const probe = createConnection(path);
      probe.once('connect', () => {
        probe.destroy();
        res(true);
      });
      probe.once('error', () => res(false));
    });
    if (live) throw new IpcError('SocketInUse', `cannot listen on ${path}: another process is serving it`);
    try {
      await unlink(path);
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw new IpcError('Listen', `cannot remove the stale socket ${path}: ${errorMessage(e)}`);
    }
    this.#log.info('ipc replaced a stale socket file', { path });
  }

  #addReader(channel: Channel, socket: Socket): void {
    if (channel.stopped) {
      socket.destroy();
      return;
    }
    channel.readers.add(socket);
    socket.on('error', (e) => this.#log.debug('ipc reader error', { chainId: channel.chainId.toString(), error: e.message }));
    socket.on('close', () => channel.readers.delete(socket));
    // Readers have nothing to say; discard whatever they send so 'end' (reader gone) is seen.
    socket.resume();
    this.#log.debug('ipc reader connected', { chainId: channel.chainId.toString(), readers: channel.readers.size });
  }

  #send(channel: Channel, block: AcceptedBlock): void {
    if (channel.readers.size === 0) return;
    const n = block.bytes.length;
    if (n > MAX_FRAME_PAYLOAD) {
      this.#log.error('ipc block too large for a frame; skipped', { chainId: channel.chainId.toString(), height: block.height, bytes: n });
      return;
    }
    // One buffer shared by every reader: sockets keep a reference, not a copy.
    const frame = new Uint8Array(4 + n);
    new DataView(frame.buffer).setUint32(0, n, false);
    frame.set(block.bytes, 4);
    for (const socket of channel.readers) {
      if (socket.destroyed || socket.writableEnded) continue;
      if (socket.writableLength > this.#maxBuffered) {
        channel.readers.delete(socket);
        this.#log.warn('ipc reader dropped: not keeping up', {
          chainId: channel.chainId.toString(),
          bufferedBytes: socket.writableLength,
          maxBufferedBytes: this.#maxBuffered,
        });
        socket.destroy();
        continue;
      }
      socket.write(frame);
    }
  }

  /** The chain's stream ended: stop publishing it as unpublish would. */
  #retire(channel: Channel): void {
    const key = channel.chainId.key;
    if (this.#channels.get(key) === channel.entry) this.#channels.delete(key);
    void this.#shutdown(channel);
  }

  #shutdown(channel: Channel): Promise<void> {
    if (channel.stopped) return channel.stopped;
    const key = channel.chainId.key;
    const done = (async () => {
      channel.subscription?.unsubscribe();
      for (const socket of channel.readers) socket.destroy();
      channel.readers.clear();
      if (channel.server.listening) {
        await new Promise<void>((res) => channel.server.close(() => res()));
      }
      try {
        await unlink(channel.path);
      } catch (e) {
        if (errorCode(e) !== 'ENOENT') this.#log.warn('ipc cannot remove socket file', { path: channel.path, error: errorMessage(e) });
      }
      this.#log.info('ipc stopped publishing chain', { chainId: channel.chainId.toString() });
    })();
    const tracked = done.finally(() => {
      if (this.#closing.get(key) === tracked) this.#closing.delete(key);
    });
    this.#closing.set(key, tracked);
    channel.stopped = tracked;
    return tracked;
  }
}
