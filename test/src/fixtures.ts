import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const staker = (i: number, ext: 'crt' | 'key') => `${REPO}core/fixtures/staking/local/staker${i}.${ext}`;

/** The flags `npm start` passes (the root package.json's start script): node 1's fixture certificate, a one-node network, the EVM's debug API. */
export const npmStartFlags = (i = 1): string[] => [
  '--network-id=local',
  `--staking-tls-cert-file=${staker(i, 'crt')}`,
  `--staking-tls-key-file=${staker(i, 'key')}`,
  '--sybil-protection-enabled=false',
  '--evm-debug-api',
];

export const TIMESTAMP_CHAIN_ID = '2SMYrx4Dj6QqCEA3WjnUTYEFSnpqVTwyV3GPNgQqQZbBbFgoJX';
export const NODE1_ID = 'LHgqGqV1QYBuyTywXEvmswXme3iH8myRY';
