import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { generateStakingCert, nodeIdFromCert } from '../../src/staking/cert.js';

test('mutual TLS between two generated certificates; each side derives the other\'s node ID', async () => {
  const [serverCert, clientCert] = await Promise.all([generateStakingCert(), generateStakingCert()]);
  const server = createServer({
    key: serverCert.keyPem,
    cert: serverCert.certPem,
    requestCert: true,
    rejectUnauthorized: false,
  });
  const serverSide = new Promise<string>((resolve, reject) => {
    server.once('secureConnection', (socket: TLSSocket) => {
      try {
        const peer = socket.getPeerCertificate(true);
        resolve(nodeIdFromCert(peer.raw).toString());
      } catch (err) {
        reject(err);
      } finally {
        socket.end();
      }
    });
    server.once('tlsClientError', reject);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const client = connect({
    host: '127.0.0.1',
    port,
    key: clientCert.keyPem,
    cert: clientCert.certPem,
    rejectUnauthorized: false,
  });
  try {
    await once(client, 'secureConnect');
    const serverIdSeenByClient = nodeIdFromCert(client.getPeerCertificate(true).raw).toString();
    const clientIdSeenByServer = await serverSide;
    assert.is(serverIdSeenByClient, serverCert.nodeId.toString());
    assert.is(clientIdSeenByServer, clientCert.nodeId.toString());
    assert.is.not(serverIdSeenByClient, clientIdSeenByServer);
  } finally {
    client.destroy();
    server.close();
    await once(server, 'close');
  }
});

test.run();
