import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate, createPrivateKey, createPublicKey, webcrypto } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_STAKER_NODE_IDS } from '../../src/genesis/local.js';
import {
  StakingError,
  generateStakingCert,
  loadOrCreateStakingCert,
  loadStakingCert,
  nodeIdFromCert,
} from '../../src/staking/cert.js';
import * as x509 from '../../src/staking/x509.js';
import { REFERENCE_NODE_IDS, referenceFile } from './reference.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cornice-staking-'));
  dirs.push(dir);
  return dir;
}
test.after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

async function rejects(p: Promise<unknown>, code: string, ...mentions: string[]): Promise<StakingError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, StakingError);
    const e = err as StakingError;
    assert.is(e.code, code);
    for (const m of mentions) assert.ok(e.message.includes(m), `"${e.message}" names ${m}`);
    return e;
  }
  throw new Error(`expected a StakingError ${code}`);
}

const LOCAL = new URL('../../../fixtures/staking/local/', import.meta.url);

test('nodeIdFromCert = RIPEMD160(SHA256(DER)) in cb58 (reference stakers 1-5)', async () => {
  for (const [i, id] of REFERENCE_NODE_IDS.entries()) {
    const der = new X509Certificate(await readFile(referenceFile(`staker${i + 1}.crt`))).raw;
    assert.is(nodeIdFromCert(der).toString(), id, `staker ${i + 1}`);
  }
});

test('a generated certificate parses with the X.509 library: self-signed, verifies, CA:FALSE critical', async () => {
  const now = new Date('2024-06-01T12:00:00.500Z');
  const c = await generateStakingCert({ now });
  const x = new x509.X509Certificate(c.certDer);
  assert.ok(sameBytes(new Uint8Array(x.rawData), c.certDer));
  assert.is(x.subject, 'CN=cornice');
  assert.is(x.issuer, 'CN=cornice');
  assert.ok(await x.isSelfSigned(webcrypto));
  assert.ok(await x.verify({ signatureOnly: true }, webcrypto));
  assert.equal(x.signatureAlgorithm, { name: 'ECDSA', hash: { name: 'SHA-256' } });
  assert.equal((await x.publicKey.export(webcrypto)).algorithm, { name: 'ECDSA', namedCurve: 'P-256' });
  assert.is(x.notBefore.toISOString(), '2024-05-31T12:00:00.000Z');
  assert.is(x.notAfter.toISOString(), '2124-06-01T12:00:00.000Z');
  const bc = x.getExtension(x509.BasicConstraintsExtension);
  assert.ok(bc, 'basicConstraints present');
  assert.is(bc.ca, false);
  assert.is(bc.critical, true);
  assert.is(x.extensions.length, 1);
  // Another certificate's key does not verify it.
  const other = new x509.X509Certificate((await generateStakingCert({ now })).certDer);
  assert.not.ok(await x.verify({ publicKey: other.publicKey, signatureOnly: true }, webcrypto));
});

test('validityYears and commonName: the window and the name are as asked', async () => {
  const now = new Date('2025-02-03T04:05:06Z');
  const c = await generateStakingCert({ now, validityYears: 1, commonName: 'node,one=+"x"' });
  const x = new x509.X509Certificate(c.certDer);
  assert.is(x.notBefore.toISOString(), '2025-02-02T04:05:06.000Z');
  assert.is(x.notAfter.toISOString(), '2026-02-03T04:05:06.000Z');
  assert.equal(x.subjectName.getField('CN'), ['node,one=+"x"']);
  assert.equal(x.issuerName.getField('CN'), ['node,one=+"x"']);
  assert.ok(await x.isSelfSigned(webcrypto));
});

test('a generated certificate parses with node:crypto, matches its key and verifies', async () => {
  const now = new Date('2024-06-01T12:00:00.500Z');
  const c = await generateStakingCert({ now });
  const x = new X509Certificate(c.certPem);
  assert.ok(sameBytes(x.raw, c.certDer));
  assert.ok(x.checkPrivateKey(createPrivateKey(c.keyPem)));
  assert.ok(x.verify(x.publicKey));
  assert.is(x.publicKey.asymmetricKeyType, 'ec');
  assert.is(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.is(x.subject, 'CN=cornice');
  assert.is(x.issuer, 'CN=cornice');
  assert.is(x.ca, false);
  assert.ok(x.checkIssued(x));
  assert.match(x.serialNumber, /^[4-7][0-9A-F]{31}$/);
  assert.is(new Date(x.validFrom).toISOString(), '2024-05-31T12:00:00.000Z');
  assert.is(new Date(x.validTo).toISOString(), '2124-06-01T12:00:00.000Z');
  assert.ok(c.keyPem.startsWith('-----BEGIN PRIVATE KEY-----\n'));
  assert.ok(c.certPem.startsWith('-----BEGIN CERTIFICATE-----\n'));
  assert.ok(c.certPem.split('\n').every((l) => l.length <= 64));
  assert.is(nodeIdFromCert(c.certDer).toString(), c.nodeId.toString());
});

test('two generated certificates differ (key, serial, node ID)', async () => {
  const [a, b] = await Promise.all([generateStakingCert(), generateStakingCert()]);
  assert.is.not(a.nodeId.toString(), b.nodeId.toString());
  assert.is.not(new X509Certificate(a.certPem).serialNumber, new X509Certificate(b.certPem).serialNumber);
  assert.not.ok(new X509Certificate(a.certPem).checkPrivateKey(createPrivateKey(b.keyPem)));
});

test('dates from 2050 on are GeneralizedTime, before are UTCTime', async () => {
  const c = await generateStakingCert({ now: new Date('2030-01-02T03:04:05Z') });
  const x = new X509Certificate(c.certPem);
  assert.is(new Date(x.validTo).getUTCFullYear(), 2130);
  assert.is(new Date(x.validFrom).toISOString(), '2030-01-01T03:04:05.000Z');
  const der = Buffer.from(c.certDer);
  assert.ok(der.includes(Buffer.concat([Buffer.of(0x17, 0x0d), Buffer.from('300101030405Z')])), 'UTCTime notBefore');
  assert.ok(der.includes(Buffer.concat([Buffer.of(0x18, 0x0f), Buffer.from('21300102030405Z')])), 'GeneralizedTime notAfter');
  // Both bounds beyond 2049.
  const late = new X509Certificate((await generateStakingCert({ now: new Date('2060-07-08T09:10:11Z') })).certPem);
  assert.is(new Date(late.validFrom).toISOString(), '2060-07-07T09:10:11.000Z');
  assert.is(new Date(late.validTo).toISOString(), '2160-07-08T09:10:11.000Z');
  assert.ok(late.verify(late.publicKey));
});

test('loadOrCreate: creates key (0600) and cert (0644) with parent dirs; reload gives the same node ID', async () => {
  const dir = await tempDir();
  const files = { certFile: join(dir, 'a', 'staking', 'staker.crt'), keyFile: join(dir, 'b', 'staker.key') };
  const created = await loadOrCreateStakingCert(files);
  assert.is((await stat(files.keyFile)).mode & 0o777, 0o600);
  assert.is((await stat(files.certFile)).mode & 0o777, 0o644);
  assert.is(await readFile(files.certFile, 'utf8'), created.certPem);
  assert.is(await readFile(files.keyFile, 'utf8'), created.keyPem);
  const loaded = await loadOrCreateStakingCert(files);
  assert.is(loaded.nodeId.toString(), created.nodeId.toString());
  assert.ok(sameBytes(loaded.certDer, created.certDer));
  assert.is(loaded.keyPem, created.keyPem);
  assert.is(loaded.certPem, created.certPem);
  const x = new X509Certificate(await readFile(files.certFile));
  assert.ok(x.checkPrivateKey(createPrivateKey(await readFile(files.keyFile))));
});

test('exactly one file present is an error naming the missing file', async () => {
  const dir = await tempDir();
  const files = { certFile: join(dir, 'staker.crt'), keyFile: join(dir, 'staker.key') };
  await loadOrCreateStakingCert(files);
  const keyText = await readFile(files.keyFile, 'utf8');
  await unlink(files.keyFile);
  await rejects(loadOrCreateStakingCert(files), 'MissingFile', files.keyFile);
  await writeFile(files.keyFile, keyText);
  await unlink(files.certFile);
  await rejects(loadOrCreateStakingCert(files), 'MissingFile', files.certFile);
  // Nothing was generated in place of the missing file.
  assert.is(await stat(files.certFile).then(() => true, () => false), false);
});

test('a key that does not match the certificate is an error naming both files', async () => {
  const dir = await tempDir();
  const a = await generateStakingCert();
  const b = await generateStakingCert();
  const files = { certFile: join(dir, 'staker.crt'), keyFile: join(dir, 'staker.key') };
  await writeFile(files.certFile, a.certPem);
  await writeFile(files.keyFile, b.keyPem);
  await rejects(loadOrCreateStakingCert(files), 'KeyMismatch', files.keyFile, files.certFile);
});

test('unparseable files are errors naming the file', async () => {
  const dir = await tempDir();
  const good = await generateStakingCert();
  const files = { certFile: join(dir, 'staker.crt'), keyFile: join(dir, 'staker.key') };
  await writeFile(files.certFile, '-----BEGIN CERTIFICATE-----\nnot a cert\n-----END CERTIFICATE-----\n');
  await writeFile(files.keyFile, good.keyPem);
  await rejects(loadOrCreateStakingCert(files), 'InvalidCert', files.certFile);
  await writeFile(files.certFile, good.certPem);
  await writeFile(files.keyFile, 'garbage');
  await rejects(loadOrCreateStakingCert(files), 'InvalidKey', files.keyFile);
  // A public key is not a private key.
  await writeFile(files.keyFile, createPublicKey(good.keyPem).export({ type: 'spki', format: 'pem' }) as string);
  await rejects(loadOrCreateStakingCert(files), 'InvalidKey', files.keyFile);
  // Unreadable (a directory in place of the file).
  await rm(files.certFile);
  await mkdir(files.certFile);
  await rejects(loadOrCreateStakingCert(files), 'Io', files.certFile);
});

test('loads a certificate and key of another tool (reference staker 1: RSA-4096, PKCS#1 key)', async () => {
  const files = { certFile: referenceFile('staker1.crt'), keyFile: referenceFile('staker1.key') };
  const loaded = await loadOrCreateStakingCert(files);
  assert.is(loaded.nodeId.toString(), REFERENCE_NODE_IDS[0]);
  assert.ok(sameBytes(loaded.certDer, new X509Certificate(await readFile(files.certFile)).raw));
  // The key is handed on as PKCS#8 whatever the file's format, and is the same key.
  assert.ok(loaded.keyPem.startsWith('-----BEGIN PRIVATE KEY-----\n'));
  assert.ok(createPrivateKey(loaded.keyPem).equals(createPrivateKey(await readFile(files.keyFile))));
  assert.is(createPrivateKey(loaded.keyPem).asymmetricKeyDetails?.modulusLength, 4096);
});

test('a key of another certificate is KeyMismatch, RSA or EC', async () => {
  await rejects(loadStakingCert({ certFile: referenceFile('staker2.crt'), keyFile: referenceFile('staker1.key') }), 'KeyMismatch');
  const dir = await tempDir();
  const ec = await generateStakingCert();
  const files = { certFile: join(dir, 'staker.crt'), keyFile: join(dir, 'staker.key') };
  await writeFile(files.certFile, ec.certPem);
  await writeFile(files.keyFile, await readFile(referenceFile('staker1.key')));
  await rejects(loadStakingCert(files), 'KeyMismatch', files.keyFile, files.certFile);
  await writeFile(files.certFile, await readFile(referenceFile('staker1.crt')));
  await writeFile(files.keyFile, ec.keyPem);
  await rejects(loadStakingCert(files), 'KeyMismatch', files.keyFile, files.certFile);
});

test('the committed local stakers load and give the local genesis node IDs', async () => {
  for (const [i, id] of LOCAL_STAKER_NODE_IDS.entries()) {
    const loaded = await loadStakingCert({
      certFile: fileURLToPath(new URL(`staker${i + 1}.crt`, LOCAL)),
      keyFile: fileURLToPath(new URL(`staker${i + 1}.key`, LOCAL)),
    });
    assert.is(loaded.nodeId.toString(), id, `staker ${i + 1}`);
  }
});

test('a DER certificate file loads like its PEM; bytes after the DER certificate do not', async () => {
  const dir = await tempDir();
  const c = await generateStakingCert();
  const files = { certFile: join(dir, 'staker.der'), keyFile: join(dir, 'staker.key') };
  await writeFile(files.keyFile, c.keyPem);
  await writeFile(files.certFile, c.certDer);
  const loaded = await loadStakingCert(files);
  assert.is(loaded.nodeId.toString(), c.nodeId.toString());
  assert.is(loaded.certPem, c.certPem);
  await writeFile(files.certFile, Buffer.concat([c.certDer, Buffer.of(0)]));
  await rejects(loadStakingCert(files), 'InvalidCert', files.certFile, 'follow');
});

test('a PEM without a CERTIFICATE block, and oversized files, are errors naming the file', async () => {
  const dir = await tempDir();
  const c = await generateStakingCert();
  const files = { certFile: join(dir, 'staker.crt'), keyFile: join(dir, 'staker.key') };
  await writeFile(files.keyFile, c.keyPem);
  await writeFile(files.certFile, c.keyPem); // a key where the certificate should be
  await rejects(loadStakingCert(files), 'InvalidCert', files.certFile, 'CERTIFICATE');
  await writeFile(files.certFile, c.certPem + 'x'.repeat(70 * 1024));
  await rejects(loadStakingCert(files), 'InvalidCert', files.certFile, 'bytes');
  await writeFile(files.certFile, c.certPem);
  await writeFile(files.keyFile, c.keyPem + '\n'.repeat(70 * 1024));
  await rejects(loadStakingCert(files), 'InvalidKey', files.keyFile, 'bytes');
});

test.run();
