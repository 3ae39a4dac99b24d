/**
 * txAllowListConfig at 0x0200…02 (A.3): an allow list only. Its roles gate which senders may issue
 * transactions (`checkTransact`, for ChainRules.checkTx: admission and each tx of a block).
 */
import type { HookState } from '@cornice/evm';
import { fromHex } from '@cornice/sdk';
import { checksumAddress } from './abi.js';
import { allowListOnlyModule, hasEnabledRole, type AllowListModuleConfig } from './allow-list.js';

export const TX_ALLOW_LIST_ADDRESS = fromHex('0x0200000000000000000000000000000000000002');

export type TxAllowListConfig = AllowListModuleConfig;

export const txAllowList = allowListOnlyModule('txAllowListConfig', TX_ALLOW_LIST_ADDRESS);

/** True when `sender` may issue transactions while the tx allow list is active. */
export function canTransact(state: HookState, sender: Uint8Array): Promise<boolean> {
  return hasEnabledRole(state, TX_ALLOW_LIST_ADDRESS, sender);
}

/** The reference's refusal of a tx from `sender`, or undefined when it may send (ChainRules.checkTx). */
export async function checkTransact(state: HookState, sender: Uint8Array): Promise<string | undefined> {
  return (await canTransact(state, sender)) ? undefined : `cannot issue transaction from non-allow listed address: ${checksumAddress(sender)}`;
}
