/** Builds and starts the node's peer-to-peer network from its config (the composition root's part). */
import { Id, type Logger, type ShortId, type Validator } from '@cornice/sdk';
import { ConfigError, type NodeConfig } from '../config/config.js';
import { parseIpPort, parseNodeId } from '../network/addresses.js';
import { Network, type BootstrapPeer, type NetworkLimits } from '../network/network.js';
import { DEFAULT_REQUEST_BUDGET } from '../network/request-budget.js';
import type { StakingCert } from '../staking/cert.js';
import type { ValidatorSets } from '../validators/validators.js';
import { nodeVersion } from './version.js';

/** The bootstrap nodes of a config (flags are validated already: pairs of ip:port and node ID). */
export function bootstrapPeersOf(config: Pick<NodeConfig, 'bootstrapIps' | 'bootstrapIds'>): BootstrapPeer[] {
  return config.bootstrapIps.map((text, i) => ({ ...parseIpPort(text)!, nodeId: parseNodeId(config.bootstrapIds[i]!)! }));
}

/** The network's limits from the config (the flags of network/inbound.ts and network/request-budget.ts). */
export function networkLimitsOf(config: NodeConfig): Partial<NetworkLimits> {
  const d = DEFAULT_REQUEST_BUDGET;
  const share = config.networkAtLargeBusyShare;
  const atLargeBytes = config.networkAtLargeReplyBytesPerSecond;
  const validatorBytes = config.networkValidatorReplyBytesPerSecond;
  return {
    inboundPerIpBurst: config.networkInboundConnectionBurst,
    inboundCooldownMs: config.networkInboundConnectionCooldown,
    maxHandshaking: config.networkMaxHandshakingConnections,
    handshakeTimeoutMs: config.networkHandshakeTimeout,
    requestBudget: {
      ...d,
      validator: { ...d.validator, replyBytesPerSecond: validatorBytes, replyBytesBurst: 2 * validatorBytes },
      atLarge: { ...d.atLarge, busyShare: share, maxInFlight: config.networkAtLargeMaxRequestsInProgress, replyBytesPerSecond: atLargeBytes, replyBytesBurst: 4 * atLargeBytes },
      atLargePool: {
        ...d.atLargePool,
        busyShare: Math.min(1, 2 * share),
        maxInFlight: 4 * config.networkAtLargeMaxRequestsInProgress,
        replyBytesPerSecond: 2 * atLargeBytes,
        replyBytesBurst: 8 * atLargeBytes,
      },
    },
  };
}

/**
 * Whether a node validates the primary network, for the request budget. With sybil protection off
 * too (a dev node, `npm start`): the genesis and platform validators get the validator allocation
 * and every other peer the at-large one — a peer with a fresh certificate is not made a validator by
 * connecting. The set is rebuilt only when the platform chain replaces it (ValidatorSets.set makes a
 * new array).
 */
export function validatorCheck(sets: ValidatorSets): (nodeId: ShortId) => boolean {
  let source: readonly Validator[] | undefined;
  let keys = new Set<string>();
  return (nodeId) => {
    const current = sets.listNow(Id.empty);
    if (current !== source) {
      source = current;
      keys = new Set(current.map((v) => v.nodeId.key));
    }
    return keys.has(nodeId.key);
  };
}

export async function startNetwork(config: NodeConfig, cert: StakingCert, log: Logger, isValidator?: (nodeId: ShortId) => boolean): Promise<Network> {
  const network = new Network({
    networkId: config.networkId,
    nodeId: cert.nodeId,
    cert,
    host: config.stakingHost,
    port: config.stakingPort,
    ...(config.publicIp ? { publicIp: config.publicIp } : {}),
    bootstrappers: bootstrapPeersOf(config),
    version: nodeVersion(),
    log,
    limits: networkLimitsOf(config),
    ...(isValidator ? { isValidator } : {}),
  });
  try {
    await network.start();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const where = `${config.stakingHost || '0.0.0.0'}:${config.stakingPort}`;
    if (code === 'EADDRINUSE') throw new ConfigError('InvalidValue', `staking port ${where} is in use: give another --staking-port (0 picks a free one)`);
    if (code === 'EADDRNOTAVAIL') throw new ConfigError('InvalidValue', `--staking-host ${config.stakingHost} is not an address of this machine`);
    throw e;
  }
  return network;
}
