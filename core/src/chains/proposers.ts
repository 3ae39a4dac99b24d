/**
 * Who builds first at each height. Validators hold the same txs (the VMs gossip them), and if all of
 * them built as soon as they could, every height would see competing blocks and consensus would
 * spend its polls rejecting them. So each height has an order of proposers: validators ranked by
 * SHA-256(chainID ‖ height ‖ nodeID) — the same order at every node — among those connected;
 * rank r may build `r × window` ms after its parent became preferred. The first is usually alone;
 * when it is down or has nothing, the next one steps in a window later. A node that does not
 * validate builds last. (Equal chances per validator, whatever its stake.)
 *
 * The window's length depends on the VM. When it gossips its txs, every validator holds them, so a
 * later rank only matters if the first proposer's block does not arrive in time: its window is long
 * (2 s), since on validators busy checking a flood of gossiped txs a block of a thousand txs took
 * 0.5–1 s to arrive, and at 500 ms windows three or four ranks built competing blocks at most
 * heights under load (each verified by every node, then rejected: as much CPU as accepting).
 * When the VM does not gossip, a pending tx is only at the node it was issued to and waits for that
 * node's rank, so the window stays short (500 ms).
 */
import { Writer, compareBytes, concatBytes, sha256, type Id, type ShortId } from '@cornice/sdk';

/** How long each proposer rank waits after the one before it, for a VM that does not gossip its txs. */
export const PROPOSER_WINDOW_MS = 500;
/** The same for a VM that gossips its txs to the other validators. */
export const GOSSIP_PROPOSER_WINDOW_MS = 2_000;

/** The window for a chain whose VM gossips its txs or not. */
export function proposerWindowMs(vmGossips: boolean): number {
  return vmGossips ? GOSSIP_PROPOSER_WINDOW_MS : PROPOSER_WINDOW_MS;
}

export interface ProposerOptions {
  chainId: Id;
  nodeId: ShortId;
  /** The chain's validators now. */
  validators: () => readonly { nodeId: ShortId }[];
  isConnected: (node: ShortId) => boolean;
  windowMs?: number;
}

/** The engine's `proposerDelay` for one chain. */
export function proposerDelay(o: ProposerOptions): (height: number) => number {
  const window = o.windowMs ?? PROPOSER_WINDOW_MS;
  return (height) => {
    const validators = o.validators();
    const others = validators.filter((v) => !v.nodeId.equals(o.nodeId) && o.isConnected(v.nodeId));
    if (others.length === 0) return 0;
    if (!validators.some((v) => v.nodeId.equals(o.nodeId))) return (others.length + 1) * window;
    const prefix = new Writer().fixedBytes(o.chainId.bytes).u64(BigInt(height)).finish();
    const rankKey = (node: ShortId) => sha256(concatBytes(prefix, node.bytes));
    const mine = rankKey(o.nodeId);
    const rank = others.filter((v) => compareBytes(rankKey(v.nodeId), mine) < 0).length;
    return rank * window;
  };
}

