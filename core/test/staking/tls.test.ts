import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { generateStakingCert, loadStakingCert, peerCertificate } from '../../src/staking/cert.js';
import { REFERENCE_NODE_IDS, referenceFile } from './reference.js';

/** Every wait of a connection is bounded. */
const wait = () => ({ signal: AbortSignal.timeout(20_000) });

interface Identity {
  keyPem: string;
  certPem: string;
}

/**
 * One mutual-TLS connection on loopback between `server` and `client` (both present a certificate,
 * neither checks a chain: a node ID is the identity). Each side derives the other's node ID from
 * `getPeerCertificate(true).raw` through peerCertificate.
 */
async function mutualTls(server: Identity, client: Identity): Promise<{ seenByClient: string; seenByServer: string }> {
  const listener = createServer({ key: server.keyPem, cert: server.certPem, requestCert: true, rejectUnauthorized: false });
  const serverSide = new Promise<string>((resolve, reject) => {
    wait().signal.addEventListener('abort', () => reject(new Error('the server saw no TLS connection in 20 s')));
    listener.once('secureConnection', (socket: TLSSocket) => {
      try {
        resolve(peerCertificate(socket.getPeerCertificate(true).raw).nodeId.toString());
      } catch (err) {
        reject(err);
      } finally {
        socket.end();
      }
    });
    listener.once('tlsClientError', reject);
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening', wait());
  const { port } = listener.address() as AddressInfo;
  const socket = connect({ host: '127.0.0.1', port, key: client.keyPem, cert: client.certPem, rejectUnauthorized: false });
  try {
    await once(socket, 'secureConnect', wait());
    const seenByClient = peerCertificate(socket.getPeerCertificate(true).raw).nodeId.toString();
    const seenByServer = await serverSide;
    return { seenByClient, seenByServer };
  } finally {
    socket.destroy();
    listener.close();
    await once(listener, 'close', wait());
  }
}

test("mutual TLS between two generated certificates; each side derives the other's node ID", async () => {
  const [serverCert, clientCert] = await Promise.all([generateStakingCert(), generateStakingCert()]);
  const { seenByClient, seenByServer } = await mutualTls(serverCert, clientCert);
  assert.is(seenByClient, serverCert.nodeId.toString());
  assert.is(seenByServer, clientCert.nodeId.toString());
  assert.is.not(seenByClient, seenByServer);
});

test('mutual TLS between a loaded RSA certificate of another tool (reference staker 1) and a generated one', async () => {
  const rsa = await loadStakingCert({
    certFile: referenceFile('staker1.crt'),
    keyFile: referenceFile('staker1.key'),
  });
  const ec = await generateStakingCert();
  const a = await mutualTls(rsa, ec);
  assert.is(a.seenByClient, REFERENCE_NODE_IDS[0]);
  assert.is(a.seenByServer, ec.nodeId.toString());
  const b = await mutualTls(ec, rsa);
  assert.is(b.seenByClient, ec.nodeId.toString());
  assert.is(b.seenByServer, REFERENCE_NODE_IDS[0]);
  // What TLS reports is exactly the file's certificate.
  const fileDer = Buffer.from((await readFile(referenceFile('staker1.crt'), 'utf8')).replace(/-----[^-]+-----|\s/g, ''), 'base64');
  assert.ok(Buffer.from(rsa.certDer).equals(fileDer));
});

test.run();
