/** Builds and starts the node's peer-to-peer network from its config (the composition root's part). */
import type { Logger } from '@cornice/sdk';
import { ConfigError, type NodeConfig } from '../config/config.js';
import { parseIpPort, parseNodeId } from '../network/addresses.js';
import { Network, type BootstrapPeer } from '../network/network.js';
import type { StakingCert } from '../staking/cert.js';
import { readVersion } from './version.js';

/** The bootstrap nodes of a config (flags are validated already: pairs of ip:port and node ID). */
export function bootstrapPeersOf(config: Pick<NodeConfig, 'bootstrapIps' | 'bootstrapIds'>): BootstrapPeer[] {
  return config.bootstrapIps.map((text, i) => ({ ...parseIpPort(text)!, nodeId: parseNodeId(config.bootstrapIds[i]!)! }));
}

export async function startNetwork(config: NodeConfig, cert: StakingCert, log: Logger): Promise<Network> {
  const network = new Network({
    networkId: config.networkId,
    nodeId: cert.nodeId,
    cert,
    host: config.stakingHost,
    port: config.stakingPort,
    ...(config.publicIp ? { publicIp: config.publicIp } : {}),
    bootstrappers: bootstrapPeersOf(config),
    version: `cornice/${readVersion()}`,
    log,
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
