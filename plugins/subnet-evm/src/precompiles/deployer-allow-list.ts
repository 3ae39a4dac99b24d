/**
 * contractDeployerAllowListConfig at 0x0200…00 (A.3): an allow list only. Its roles gate every
 * CREATE/CREATE2 against tx.origin (`checkDeploy`, for ChainRules.canCreate).
 */
import type { HookState } from '@cornice/evm';
import { fromHex } from '@cornice/sdk';
import { checksumAddress } from './abi.js';
import { allowListOnlyModule, hasEnabledRole, type AllowListModuleConfig } from './allow-list.js';

export const DEPLOYER_ALLOW_LIST_ADDRESS = fromHex('0x0200000000000000000000000000000000000000');

export type DeployerAllowListConfig = AllowListModuleConfig;

export const contractDeployerAllowList = allowListOnlyModule('contractDeployerAllowListConfig', DEPLOYER_ALLOW_LIST_ADDRESS);

/** True when `origin` may deploy (Enabled, Admin or Manager) while the deployer allow list is active. */
export function canDeploy(state: HookState, origin: Uint8Array): Promise<boolean> {
  return hasEnabledRole(state, DEPLOYER_ALLOW_LIST_ADDRESS, origin);
}

/** The reference's refusal of a create by `origin`, or undefined when it may deploy (ChainRules.canCreate). */
export async function checkDeploy(state: HookState, origin: Uint8Array): Promise<string | undefined> {
  return (await canDeploy(state, origin)) ? undefined : `tx.origin ${checksumAddress(origin)} is not authorized to deploy a contract`;
}
