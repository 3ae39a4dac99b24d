/**
 * Shows bootstrap progress. On a terminal: one line redrawn in place (`\r`) at most every
 * `ttyIntervalMs`, with a bar per chain still bootstrapping; a chain that finishes leaves its final
 * line. Otherwise: a structured log line `bootstrapping` per chain at most every `logIntervalMs`, and
 * one when it is done. Rates and limits run on the injected clock. Nothing here throws.
 */
import type { Logger } from '@cornice/sdk';
import type { BootstrapProgress } from './types.js';

export interface BootstrapProgressOutputOptions {
  /** Whether `write` goes to a terminal (e.g. `process.stdout.isTTY === true`). */
  isTTY: boolean;
  /** Writes raw text to the terminal (used only when `isTTY`). */
  write: (text: string) => void;
  log: Logger;
  now: () => number;
  /** Width the terminal line is cut to (default 100). */
  columns?: number;
  /** Terminal redraws at most this often (default 250 ms). */
  ttyIntervalMs?: number;
  /** Log lines per chain at most this often (default 5 s). */
  logIntervalMs?: number;
}

interface ChainView {
  last: BootstrapProgress;
  /** When the chain first reported fetching or executing: its accept rate counts from there. */
  activeSince: number | undefined;
  lastLogAt: number;
}

const BAR_WIDTH = 20;

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function fmtEta(ms: number | undefined): string {
  if (ms === undefined) return '?';
  const s = Math.ceil(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (x: number) => String(x).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export class BootstrapProgressOutput {
  readonly #o: BootstrapProgressOutputOptions;
  readonly #chains = new Map<string, ChainView>();
  #lastDraw = Number.NEGATIVE_INFINITY;
  /** Length of the line on screen (to blank what a shorter redraw leaves). */
  #drawn = 0;

  constructor(opts: BootstrapProgressOutputOptions) {
    this.#o = opts;
  }

  /** Takes one progress report (use as the Bootstrapper's `onProgress`). */
  readonly update = (p: BootstrapProgress): void => {
    try {
      this.#update(p);
    } catch (err) {
      this.#o.log.debug('progress output failed', { error: err instanceof Error ? err.message : String(err) });
    }
  };

  #update(p: BootstrapProgress): void {
    const now = this.#o.now();
    let view = this.#chains.get(p.chain);
    if (!view) {
      view = { last: p, activeSince: undefined, lastLogAt: Number.NEGATIVE_INFINITY };
      this.#chains.set(p.chain, view);
    }
    view.last = p;
    if (view.activeSince === undefined && (p.phase === 'fetching' || p.phase === 'executing')) view.activeSince = now;
    if (this.#o.isTTY) this.#tty(p, now);
    else this.#logLine(view, p, now);
    if (p.phase === 'done') this.#chains.delete(p.chain);
  }

  /** Accepted blocks per second since the chain started fetching. */
  #rate(view: ChainView, now: number): number | undefined {
    if (view.activeSince === undefined || now <= view.activeSince) return undefined;
    return (view.last.accepted * 1000) / (now - view.activeSince);
  }

  #logLine(view: ChainView, p: BootstrapProgress, now: number): void {
    if (p.phase !== 'done' && now - view.lastLogAt < (this.#o.logIntervalMs ?? 5_000)) return;
    view.lastLogAt = now;
    const rate = this.#rate(view, now);
    this.#o.log.info('bootstrapping', {
      chain: p.chain,
      phase: p.phase,
      fetched: p.fetched,
      accepted: p.accepted,
      height: p.height,
      targetHeight: p.targetHeight,
      etaSeconds: p.etaMs === undefined ? undefined : Math.ceil(p.etaMs / 1000),
      blocksPerSecond: rate === undefined ? undefined : Math.round(rate),
    });
  }

  #tty(p: BootstrapProgress, now: number): void {
    if (p.phase === 'done') {
      // The finished chain keeps its line; the others are drawn again below it on their next report.
      this.#put(`${this.#segment(p.chain, now)}\n`);
      this.#drawn = 0;
      this.#lastDraw = Number.NEGATIVE_INFINITY;
      return;
    }
    if (now - this.#lastDraw < (this.#o.ttyIntervalMs ?? 250)) return;
    this.#lastDraw = now;
    this.#put([...this.#chains.keys()].map((c) => this.#segment(c, now)).join(' | '));
  }

  /** Draws `line` over the current one (cut to the terminal width). */
  #put(line: string): void {
    const end = line.endsWith('\n') ? '\n' : '';
    const text = line.slice(0, line.length - end.length).slice(0, (this.#o.columns ?? 100) - 1);
    this.#o.write(`\r${text}${' '.repeat(Math.max(0, this.#drawn - text.length))}${end}`);
    this.#drawn = end ? 0 : text.length;
  }

  #segment(chain: string, now: number): string {
    const view = this.#chains.get(chain) as ChainView;
    const p = view.last;
    if (p.phase === 'waiting for beacons' || p.phase === 'frontier') return `${chain} ${p.phase}`;
    const target = p.targetHeight;
    const share = target === undefined || target <= 0 ? undefined : Math.min(1, Math.max(0, p.height / target));
    const filled = Math.round((share ?? 0) * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    const pct = share === undefined ? '?%' : `${Math.floor(share * 100)}%`;
    const rate = this.#rate(view, now);
    const parts = [
      `${chain} ${p.phase} ${bar} ${pct}`,
      `height ${fmtInt(p.height)}/${target === undefined ? '?' : fmtInt(target)}`,
      `fetched ${fmtInt(p.fetched)}`,
      `accepted ${fmtInt(p.accepted)}`,
    ];
    if (rate !== undefined) parts.push(`${fmtInt(rate)} blk/s`);
    parts.push(p.phase === 'done' ? 'done' : `ETA ${fmtEta(p.etaMs)}`);
    return parts.join(' · ');
  }
}
