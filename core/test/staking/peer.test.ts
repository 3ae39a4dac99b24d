import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { MAX_CERT_BYTES, StakingError, generateStakingCert, peerCertificate } from '../../src/staking/cert.js';
import { REFERENCE_NODE_IDS, referenceFile } from './reference.js';

function invalid(der: Uint8Array | undefined, ...mentions: string[]): StakingError {
  try {
    peerCertificate(der);
  } catch (err) {
    assert.instance(err, StakingError);
    const e = err as StakingError;
    assert.is(e.code, 'InvalidCert');
    for (const m of mentions) assert.ok(e.message.includes(m), `"${e.message}" names ${m}`);
    return e;
  }
  throw new Error(`expected StakingError InvalidCert for ${der?.byteLength} bytes`);
}

test('a generated certificate: node ID, a copy of the DER, the validity window', async () => {
  const c = await generateStakingCert({ now: new Date('2024-06-01T12:00:00Z') });
  const peer = peerCertificate(c.certDer);
  assert.is(peer.nodeId.toString(), c.nodeId.toString());
  assert.ok(Buffer.from(peer.der).equals(Buffer.from(c.certDer)));
  assert.is.not(peer.der.buffer, c.certDer.buffer);
  assert.is(peer.notBefore.toISOString(), '2024-05-31T12:00:00.000Z');
  assert.is(peer.notAfter.toISOString(), '2124-06-01T12:00:00.000Z');
});

test('the reference stakers 1-5 (RSA, v1, not self-signed) give their node IDs', async () => {
  for (const [i, id] of REFERENCE_NODE_IDS.entries()) {
    const der = new X509Certificate(await readFile(referenceFile(`staker${i + 1}.crt`))).raw;
    assert.is(peerCertificate(der).nodeId.toString(), id, `staker ${i + 1}`);
  }
});

test('a Buffer that is a view into a larger buffer: only its own bytes count, and are copied', async () => {
  const c = await generateStakingCert();
  const pool = Buffer.concat([Buffer.from('before'), c.certDer, Buffer.from('after')]);
  const view = pool.subarray(6, 6 + c.certDer.byteLength);
  const peer = peerCertificate(view);
  assert.is(peer.nodeId.toString(), c.nodeId.toString());
  pool.fill(0);
  assert.ok(Buffer.from(peer.der).equals(Buffer.from(c.certDer)), 'the result does not share the caller bytes');
});

test('no certificate, empty bytes, garbage -> InvalidCert', () => {
  invalid(undefined, 'no certificate');
  invalid(new Uint8Array(0), 'no bytes');
  invalid(Buffer.from('hello, I am a certificate'), 'not an X.509 certificate');
  invalid(new Uint8Array(64).fill(0xff));
  invalid(Uint8Array.of(0x30, 0x00)); // an empty SEQUENCE
  invalid(Uint8Array.of(0x30, 0x84, 0xff, 0xff, 0xff, 0xff)); // a 4 GiB length
});

test('every truncation of a certificate -> InvalidCert', async () => {
  const { certDer } = await generateStakingCert();
  for (let n = 0; n < certDer.byteLength; n++) invalid(certDer.subarray(0, n));
});

test('bytes after the certificate -> InvalidCert (the node ID hashes every byte)', async () => {
  const { certDer } = await generateStakingCert();
  invalid(Buffer.concat([certDer, Buffer.of(0)]), '1 bytes follow');
  invalid(Buffer.concat([certDer, certDer]), `${certDer.byteLength} bytes follow`);
});

test('other DER structures (a public key, a private key) -> InvalidCert', async () => {
  const { keyPem } = await generateStakingCert();
  invalid(createPublicKey(keyPem).export({ type: 'spki', format: 'der' }));
  invalid(createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' }));
});

test('oversized input -> InvalidCert before any parsing', async () => {
  const { certDer } = await generateStakingCert();
  const padded = new Uint8Array(MAX_CERT_BYTES + 1);
  padded.set(certDer);
  invalid(padded, `${MAX_CERT_BYTES + 1} bytes`, `${MAX_CERT_BYTES}`);
  invalid(new Uint8Array(64 * 1024 * 1024), 'more than');
});

test('an indefinite length, and deep nesting within the size bound -> InvalidCert, not a stack overflow', () => {
  invalid(Uint8Array.of(0x30, 0x80, 0x00, 0x00), 'definite');
  // A definite outer SEQUENCE holding SEQUENCEs of indefinite length, each opening the next.
  const inner = MAX_CERT_BYTES - 4;
  const bytes = new Uint8Array(MAX_CERT_BYTES);
  bytes.set([0x30, 0x82, inner >> 8, inner & 0xff]);
  for (let i = 4; i < bytes.length; i += 2) bytes.set([0x30, 0x80], i);
  invalid(bytes, 'depth');
});

test.run();
