/**
 * Tiny fake precompile modules for the config, schedule and RPC tests (and throwsConfig): they parse the common part of
 * a config (blockTimestamp, disable, adminAddresses, managerAddresses) and nothing else.
 */
import { fromHex, toHex } from '@cornice/sdk';
import { parseBool, parseUint64, objectAt } from '../src/config/json.js';
import * as assert from 'uvu/assert';
import { ConfigError, type PrecompileConfigBase, type PrecompileModule } from '../src/types.js';

export interface FakeConfig extends PrecompileConfigBase {
  readonly adminAddresses: readonly Uint8Array[];
  readonly managerAddresses: readonly Uint8Array[];
}

function addresses(v: unknown, field: string): Uint8Array[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ConfigError(field, 'must be an array');
  return v.map((a, i) => {
    if (typeof a !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(a)) throw new ConfigError(`${field}[${i}]`, 'must be an address');
    return fromHex(a);
  });
}

export function fakeModule(key: string, lastAddressByte: number, firstByte = 2): PrecompileModule<FakeConfig> {
  const address = new Uint8Array(20);
  address[0] = firstByte;
  address[19] = lastAddressByte;
  return {
    key,
    address,
    parseConfig(json, field) {
      const o = objectAt(json, field);
      for (const k of Object.keys(o)) {
        if (!['blockTimestamp', 'disable', 'adminAddresses', 'managerAddresses'].includes(k)) throw new ConfigError(`${field}.${k}`, 'unknown field');
      }
      return {
        blockTimestamp: parseUint64(o['blockTimestamp'], `${field}.blockTimestamp`),
        disable: o['disable'] === undefined ? false : parseBool(o['disable'], `${field}.disable`),
        adminAddresses: addresses(o['adminAddresses'], `${field}.adminAddresses`),
        managerAddresses: addresses(o['managerAddresses'], `${field}.managerAddresses`),
      };
    },
    configJson(c) {
      const out: Record<string, unknown> = { blockTimestamp: Number(c.blockTimestamp) };
      if (c.disable) out['disable'] = true;
      if (c.adminAddresses.length) out['adminAddresses'] = c.adminAddresses.map((a) => '0x' + toHex(a));
      if (c.managerAddresses.length) out['managerAddresses'] = c.managerAddresses.map((a) => '0x' + toHex(a));
      return out;
    },
    async configure() {},
    async run() {
      return { ok: true, output: new Uint8Array(), gasUsed: 0n };
    },
  };
}

/** Deployer allow list (0x0200…00), tx allow list (0x0200…02), fee manager (0x0200…03), listed out of address order. */
export const FEE_MANAGER = fakeModule('feeManagerConfig', 3);
export const TX_ALLOW_LIST = fakeModule('txAllowListConfig', 2);
export const DEPLOYER = fakeModule('contractDeployerAllowListConfig', 0);
export const MODULES: readonly PrecompileModule[] = [FEE_MANAGER, TX_ALLOW_LIST, DEPLOYER];

export const ADMIN = '0x8db97c7cece249c2b98bdc0226cc4c2a57bf52fc';

/** Runs `fn`, expecting a ConfigError naming `field` with a message matching `why`. */
export function throwsConfig(fn: () => unknown, field: string, why: RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.instance(e, ConfigError);
    const err = e as ConfigError;
    assert.is(err.field, field, err.message);
    assert.match(err.message, why);
    assert.ok(err.message.includes(field), err.message);
    return;
  }
  assert.unreachable(`expected a ConfigError on ${field}`);
}


/** DEFAULT_FEE_CONFIG as JSON (the eth_feeConfig example of API.md). */
export const DEFAULT_FEE_JSON = {
  gasLimit: 8000000,
  targetBlockRate: 2,
  minBaseFee: 25000000000,
  targetGas: 15000000,
  baseFeeChangeDenominator: 36,
  minBlockGasCost: 0,
  maxBlockGasCost: 1000000,
  blockGasCostStep: 200000,
};
