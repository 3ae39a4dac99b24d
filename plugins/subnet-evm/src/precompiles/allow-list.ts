/**
 * The allow list every built-in precompile embeds (precompile/allowlist, A.4/A.5): roles stored in the
 * precompile's own storage at the address left-padded to 32 bytes, readAllowList and the four
 * setters with the reference's gas, errors and RoleSet event (from Durango), the config's roles and
 * their checks.
 */
import type { BlockInfo, HookState } from '@cornice/evm';
import { toHex } from '@cornice/sdk';
import { ConfigError, type AllowListConfig, type ChainConfigView, type PrecompileConfigBase, type PrecompileModule } from '../types.js';
import { addressWord, checksumAddress, eventTopic, leftPad32, readWords, uint256Word, wordToAddress, wordToBigint, WORD_BYTES } from './abi.js';
import { addressJson, baseConfigJson, objectAt, parseAddressList, parsePrecompileConfigBase, type JsonObject } from './config.js';
import {
  LOG_DATA_GAS,
  LOG_GAS,
  LOG_TOPIC_GAS,
  precompileDispatcher,
  READ_GAS_PER_SLOT,
  requireStrictLength,
  requireWritable,
  WRITE_GAS_PER_SLOT,
  type PrecompileEnv,
  type PrecompileFunction,
} from './contract.js';
import { PrecompileHalt } from './errors.js';

/** Role values (a uint256 in storage and in the ABI). */
export const Role = { None: 0n, Enabled: 1n, Admin: 2n, Manager: 3n } as const;
export type Role = bigint;

export const MODIFY_ALLOW_LIST_GAS = WRITE_GAS_PER_SLOT;
export const READ_ALLOW_LIST_GAS = READ_GAS_PER_SLOT;
/** RoleSet: 4 topics and one data word. */
export const ALLOW_LIST_EVENT_GAS = LOG_GAS + 4n * LOG_TOPIC_GAS + LOG_DATA_GAS * 32n;

export const ROLE_SET_TOPIC = eventTopic('RoleSet(uint256,address,address,uint256)');

/** Role.String() of the reference, for error texts. */
export function roleName(role: Role): string {
  switch (role) {
    case Role.None:
      return 'NoRole';
    case Role.Enabled:
      return 'EnabledRole';
    case Role.Admin:
      return 'AdminRole';
    case Role.Manager:
      return 'ManagerRole';
    default:
      return `UnknownRole[${role}]`;
  }
}

/** Enabled, Admin or Manager: may call the precompile (mint, set the fee config, deploy, send txs). */
export function isEnabledRole(role: Role): boolean {
  return role === Role.Enabled || role === Role.Admin || role === Role.Manager;
}

/** Role.CanModify: an admin sets anything; a manager moves only between None and Enabled. */
export function canModify(caller: Role, from: Role, target: Role): boolean {
  if (caller === Role.Admin) return true;
  if (caller === Role.Manager) {
    const managed = (r: Role) => r === Role.None || r === Role.Enabled;
    return managed(from) && managed(target);
  }
  return false;
}

/** The role of `address` in the allow list of the precompile at `precompile`. */
export async function readRole(state: HookState, precompile: Uint8Array, address: Uint8Array): Promise<Role> {
  return wordToBigint(await state.getStorage(precompile, leftPad32(address)));
}

export async function writeRole(state: HookState, precompile: Uint8Array, address: Uint8Array, role: Role): Promise<void> {
  await state.putStorage(precompile, leftPad32(address), uint256Word(role));
}

/** True when `address` has an enabled role (Enabled, Admin, Manager) in the precompile's allow list. */
export async function hasEnabledRole(state: HookState, precompile: Uint8Array, address: Uint8Array): Promise<boolean> {
  return isEnabledRole(await readRole(state, precompile, address));
}

/** Fails with `<refusal>: 0x…` (the caller, EIP-55) unless the caller has an enabled role. */
export async function requireEnabledCaller(env: PrecompileEnv, precompile: Uint8Array, refusal: string): Promise<void> {
  if (!(await hasEnabledRole(env.call.state, precompile, env.call.caller))) {
    throw new PrecompileHalt(`${refusal}: ${checksumAddress(env.call.caller)}`);
  }
}

/** The address argument of an allow-list function: exactly one word before Durango. */
function addressArg(env: PrecompileEnv, what: string): Uint8Array {
  requireStrictLength(env, WORD_BYTES, `invalid input length for ${what}`);
  return wordToAddress(readWords(env.args, 1)[0]!);
}

function roleSetter(precompile: Uint8Array, signature: string, target: Role, fromDurango = false): PrecompileFunction {
  return {
    signature,
    ...(fromDurango ? { isActive: (env: PrecompileEnv) => env.durango } : {}),
    async run(env) {
      env.gas.charge(MODIFY_ALLOW_LIST_GAS);
      const address = addressArg(env, 'modifying allow list');
      requireWritable(env);
      const state = env.call.state;
      const callerRole = await readRole(state, precompile, env.call.caller);
      const from = await readRole(state, precompile, address);
      if (!canModify(callerRole, from, target)) {
        // The reference names the caller as "modify address".
        throw new PrecompileHalt(
          `cannot modify allow list: modify address: ${checksumAddress(env.call.caller)}, from role: ${roleName(from)}, to role: ${roleName(target)}`,
        );
      }
      if (env.durango) {
        env.gas.charge(ALLOW_LIST_EVENT_GAS);
        env.emit([ROLE_SET_TOPIC, uint256Word(target), addressWord(address), addressWord(env.call.caller)], uint256Word(from));
      }
      await writeRole(state, precompile, address, target);
      return new Uint8Array(0);
    },
  };
}

/** readAllowList, setAdmin, setEnabled, setNone and setManager (from Durango) of the precompile at `precompile`. */
export function allowListFunctions(precompile: Uint8Array): PrecompileFunction[] {
  return [
    {
      signature: 'readAllowList(address)',
      async run(env) {
        env.gas.charge(READ_ALLOW_LIST_GAS);
        const address = addressArg(env, 'read allow list');
        return uint256Word(await readRole(env.call.state, precompile, address));
      },
    },
    roleSetter(precompile, 'setAdmin(address)', Role.Admin),
    roleSetter(precompile, 'setEnabled(address)', Role.Enabled),
    roleSetter(precompile, 'setNone(address)', Role.None),
    roleSetter(precompile, 'setManager(address)', Role.Manager, true),
  ];
}

/**
 * Reads adminAddresses / managerAddresses / enabledAddresses and checks them as AllowListConfig.Verify:
 * no duplicates, no address in two lists, no managers before Durango.
 */
export function parseAllowListConfig(o: JsonObject, field: string, base: PrecompileConfigBase, chain: ChainConfigView): AllowListConfig {
  const adminAddresses = parseAddressList(o.adminAddresses, `${field}.adminAddresses`);
  const managerAddresses = parseAddressList(o.managerAddresses, `${field}.managerAddresses`);
  const enabledAddresses = parseAddressList(o.enabledAddresses, `${field}.enabledAddresses`);
  const seen = new Map<string, Role>();
  for (const [i, a] of enabledAddresses.entries()) {
    if (seen.has(toHex(a))) throw new ConfigError(`${field}.enabledAddresses[${i}]`, `duplicate address in enabled list: ${checksumAddress(a)}`);
    seen.set(toHex(a), Role.Enabled);
  }
  for (const [i, a] of adminAddresses.entries()) {
    const role = seen.get(toHex(a));
    if (role === Role.Admin) throw new ConfigError(`${field}.adminAddresses[${i}]`, `duplicate address in admin list: ${checksumAddress(a)}`);
    if (role !== undefined) throw new ConfigError(`${field}.adminAddresses[${i}]`, `cannot set address as both admin and enabled: ${checksumAddress(a)}`);
    seen.set(toHex(a), Role.Admin);
  }
  if (managerAddresses.length > 0 && !chain.isDurango(base.blockTimestamp)) {
    throw new ConfigError(`${field}.managerAddresses`, 'cannot add managers before Durango');
  }
  for (const [i, a] of managerAddresses.entries()) {
    const role = seen.get(toHex(a));
    const at = `${field}.managerAddresses[${i}]`;
    if (role === Role.Manager) throw new ConfigError(at, `duplicate address in manager list: ${checksumAddress(a)}`);
    if (role === Role.Admin) throw new ConfigError(at, `cannot set address as both admin and manager: ${checksumAddress(a)}`);
    if (role === Role.Enabled) throw new ConfigError(at, `cannot set address as both enabled and manager: ${checksumAddress(a)}`);
    seen.set(toHex(a), Role.Manager);
  }
  return { adminAddresses, managerAddresses, enabledAddresses };
}

/** The lists as JSON (lower-case 0x addresses; empty lists left out, as Go's omitempty). */
export function allowListConfigJson(config: AllowListConfig): JsonObject {
  const out: JsonObject = {};
  if (config.adminAddresses.length) out.adminAddresses = config.adminAddresses.map(addressJson);
  if (config.managerAddresses.length) out.managerAddresses = config.managerAddresses.map(addressJson);
  if (config.enabledAddresses.length) out.enabledAddresses = config.enabledAddresses.map(addressJson);
  return out;
}

/** AllowListConfig.Configure: enabled, then admins, then managers. */
export async function configureAllowList(state: HookState, precompile: Uint8Array, config: AllowListConfig): Promise<void> {
  for (const a of config.enabledAddresses) await writeRole(state, precompile, a, Role.Enabled);
  for (const a of config.adminAddresses) await writeRole(state, precompile, a, Role.Admin);
  for (const a of config.managerAddresses) await writeRole(state, precompile, a, Role.Manager);
}

/** An allow-list module's config: the Upgrade part and the lists. */
export interface AllowListModuleConfig extends PrecompileConfigBase, AllowListConfig {}

/** Parses a config that is only the Upgrade part and the allow list (deployer and tx allow lists). */
export function parseAllowListModuleConfig(json: unknown, field: string, chain: ChainConfigView): AllowListModuleConfig {
  const base = parsePrecompileConfigBase(json, field);
  return { ...base, ...parseAllowListConfig(objectAt(json, field), field, base, chain) };
}

export function allowListModuleConfigJson(config: AllowListModuleConfig): JsonObject {
  return { ...baseConfigJson(config), ...allowListConfigJson(config) };
}

/** A module made of the allow list and its own functions (every built-in, and third parties'). */
export interface AllowListModuleSpec<C extends AllowListModuleConfig> {
  readonly key: string;
  readonly address: Uint8Array;
  /** The module's own config fields (the Upgrade part and the lists are read already). */
  parseExtra?(o: JsonObject, field: string, chain: ChainConfigView): Omit<C, keyof AllowListModuleConfig>;
  /** The module's own fields as JSON. */
  extraJson?(config: C): JsonObject;
  /** Writes the module's own initial state; runs before the roles are written. */
  configureExtra?(state: HookState, config: C, block: BlockInfo, chain: ChainConfigView): Promise<void>;
  /** The module's functions besides readAllowList and the role setters. */
  readonly functions: readonly PrecompileFunction<C>[];
}

export function allowListModule<C extends AllowListModuleConfig>(spec: AllowListModuleSpec<C>): PrecompileModule<C> {
  const { key, address } = spec;
  return {
    key,
    address,
    parseConfig(json, field, chain) {
      const base = parseAllowListModuleConfig(json, field, chain);
      return { ...base, ...spec.parseExtra?.(objectAt(json, field), field, chain) } as C;
    },
    configJson: (config) => ({ ...allowListModuleConfigJson(config), ...spec.extraJson?.(config) }),
    async configure(state, config, block, chain) {
      await spec.configureExtra?.(state, config, block, chain);
      await configureAllowList(state, address, config);
    },
    run: precompileDispatcher<C>([...(allowListFunctions(address) as PrecompileFunction<C>[]), ...spec.functions]),
  };
}

/** A module that is only an allow list (the deployer and tx allow lists). */
export function allowListOnlyModule(key: string, address: Uint8Array): PrecompileModule<AllowListModuleConfig> {
  return allowListModule({ key, address, functions: [] });
}
