import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StakingError,
  generateStakingCert,
  loadOrCreateStakingCert,
  nodeIdFromCert,
} from '../../src/staking/cert.js';

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

// A public test vector: the reference node's local staker 1 certificate (RSA) and its node ID.
const staker1Pem = `-----BEGIN CERTIFICATE-----
MIIFNzCCAx8CCQC687XFxtDRSjANBgkqhkiG9w0BAQsFADB/MQswCQYDVQQGEwJV
UzELMAkGA1UECAwCTlkxDzANBgNVBAcMBkl0aGFjYTEQMA4GA1UECgwHQXZhbGFi
czEOMAwGA1UECwwFR2Vja28xDDAKBgNVBAMMA2F2YTEiMCAGCSqGSIb3DQEJARYT
c3RlcGhlbkBhdmFsYWJzLm9yZzAgFw0xOTA3MDIxNjEyMTVaGA8zMDE5MDcxMDE2
MTIxNVowOjELMAkGA1UEBhMCVVMxCzAJBgNVBAgMAk5ZMRAwDgYDVQQKDAdBdmFs
YWJzMQwwCgYDVQQDDANhdmEwggIiMA0GCSqGSIb3DQEBAQUAA4ICDwAwggIKAoIC
AQDKYSRw/W0YpYH/MTQhiFrR0m89l6yTuzLpDtjudr/5RnhIPvtqk7YIGm/m9l29
xwR4J5r7SZGs+70yBetkbS+h7PwJ2rmWDwbrdyJKvVBhqf8kSn+VU2LePSIcJj19
3LDyWhV1H4lqNkUkcAR76Fh9qjMvA2p0vJ66+eDLXlph/RYapQx9HgOj/0BmAKMr
YCyo5BhRih+Ougg8aK4G9PQTIA5G2wTWW2QkHxM/QppFjZd/XwQeJ2H6ubWMFc5f
ttf6AzpJvFIDBu/JDCKWiCu5m8t4GL8w2OrIx8Js19lF4YYE2eojCreqgPi64S3o
cqwKsDoySTw6/5iKQ5BUYwUXX3z7EXOqD8SMHefUKeczj4WvAaZLzR27qXm55EgR
YQAIX4fhmY7NfSop3Wh0Eo62+JHoM/1g+UgOXlbnWpY95Mgd7/fwDSWLu4IxE0/u
q8VufIbfC4yrY8qlTVfAffI1ldRdvJjPJBPiQ0CNrOl60LVptpkGc9shH7wZ2bP0
bEnYKTgLAfOzD8Ut71O2AOIa80A1GNFl4Yle/MSNJOcQOSpgtWdREzIUoenAjfuz
M4OeTr4cRg4+VYTAo9KHKriN1DuewNzGd8WjKAVHmcIMjqISLTlzMhdsdm+OmfQ6
OvyX7v0GTOBbhP09NGcww5A0gCzXN18FS5oxnxe6OG9D0wIDAQABMA0GCSqGSIb3
DQEBCwUAA4ICAQAqL1TWI1PTMm3JaXkhdTBe8tsk7+FsHAFzTcBVBsB8dkJNGhxb
dlu7XIm+AyGUn0j8siz8qojKbO+rEPV/ImTH5W7Q36rXSdgvNUWpKrKIC5S8PUF5
T4pH+lpYIlQHnTaKMuqH3nO3I40IhEhPaa2wAwy2kDlz46fJcr6aMzj6Zg43J5UK
Zid+BQsiWAUau5V7CpC7GMCx4YdOZWWsT3dAsug9hvwTe81kK1JoTH0juwPTBH0t
xUgUVIWyuweM1UwYF3n8Hmwq6B46YmujhMDKT+3lgqZt7eZ1XvieLdBRlVQWzOa/
6QYTkrqwPZioKIStrxVGYjk40qECNodCSCIwRDgbnQubRWrdslxiIyc5blJNuOV+
jgv5d2EeUpwUjvpZuEV7FqPKGRgiG0jfl6Psms9gYUXd+y3ytG9HeoDNmLTSTBE4
nCQXX935P2/xOuok6CpiGpP89DX7t8yiwk8LFNnY3rvv50nVy8kerVdnfHTmoMZ9
/IBgojSIKov4lmPKdgzFfimzhbssVCa4DO/LIhTF7bQbH1ut/Oq7npdOpMjLYIBE
9lagvRVTVFwT/uwrCcXHCb21b/puwV94SNXVwt7BheFTFBdtxJrR4jjr2T5odLkX
6nQcY8V2OT7KOxn0KVc6pl3saJTLmL+H/3CtAao9NtmuUDapKINRSVNyvg==
-----END CERTIFICATE-----
`;

test('nodeIdFromCert = RIPEMD160(SHA256(DER)) in cb58 (reference staker 1)', () => {
  const der = new X509Certificate(staker1Pem).raw;
  assert.is(nodeIdFromCert(der).toString(), '7Xhw2mDxuDS44j42TCB6U5579esbSt3Lg');
});

test('a generated certificate parses, matches its key and verifies', async () => {
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

test.run();
