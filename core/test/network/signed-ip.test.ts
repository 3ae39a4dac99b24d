/**
 * Signed IPs (signed-ip.ts, staking/sign.ts) and the PeerList rules built on them (peer-list.ts):
 * the signed bytes, signatures by RSA-4096 (the reference's staker key), ECDSA P-256 (this node's
 * own certificates) and Ed25519 keys, every way a claim fails to verify, which claims a PeerList
 * makes this node believe (and what that costs), and what it relays.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ShortId, toHex } from '@cornice/sdk';
import type { PeerInfo } from '../../src/network/messages.js';
import { ClaimVerifier, peerListEntries } from '../../src/network/peer-list.js';
import { claimBytes, signIp, verifyIp } from '../../src/network/signed-ip.js';
import { peerCertificate, type StakingCert } from '../../src/staking/cert.js';
import { stakingSigner, verifySignature } from '../../src/staking/sign.js';
import { referenceFile } from '../staking/reference.js';
import { testCerts, unhex } from './helpers.js';

const test = suite('network signed IPs');

const keyOf = (c: StakingCert) => peerCertificate(c.certDer).publicKey;
const T = 1_700_000_000n;

test('the signed bytes: context, IP as 16 bytes, port u16, time u64', () => {
  const ctx = toHex(new TextEncoder().encode('cornice-signed-ip-v1'));
  assert.is(toHex(claimBytes({ ip: '127.0.0.1', port: 9651, time: 0x0102n })!), toHex(unhex(`${ctx} 00000000000000000000ffff7f000001 25b3 0000000000000102`)));
  assert.is(toHex(claimBytes({ ip: '2001:db8::1', port: 1, time: 0n })!), toHex(unhex(`${ctx} 20010db8000000000000000000000001 0001 0000000000000000`)));
  for (const bad of [
    { ip: 'localhost', port: 1, time: 0n },
    { ip: '1.2.3.4', port: 65536, time: 0n },
    { ip: '1.2.3.4', port: 1.5, time: 0n },
    { ip: '1.2.3.4', port: 1, time: -1n },
    { ip: '1.2.3.4', port: 1, time: 1n << 64n },
    { ip: '1.2.3.4', port: 1, time: 1 as unknown as bigint },
  ]) {
    assert.is(claimBytes(bad), undefined, JSON.stringify({ ...bad, time: String(bad.time) }));
  }
  assert.throws(() => signIp(stakingSigner(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string), { ip: 'x', port: 1, time: 0n }), /cannot sign/);
});

test('ECDSA (this node\'s certificates): a claim verifies against the signer\'s certificate only, and only unchanged', async () => {
  const [a, b] = await testCerts(2);
  const claim = signIp(a!.keyPem, { ip: '10.1.2.3', port: 9651, time: T });
  assert.ok(verifyIp(keyOf(a!), claim));
  assert.not.ok(verifyIp(keyOf(b!), claim), 'another node\'s certificate');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, ip: '10.1.2.4' }), 'another IP');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, port: 9652 }), 'another port');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, time: T + 1n }), 'another time');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, signature: new Uint8Array(0) }), 'no signature');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, signature: new Uint8Array(72).fill(0x30) }), 'garbage');
  assert.not.ok(verifyIp(undefined, claim), 'no key');
  assert.not.ok(verifyIp(keyOf(a!), { ...claim, ip: 'not an ip' }), 'an address that cannot travel');
});

test('RSA-4096 (the reference\'s staker key, PKCS#1 v1.5 with SHA-256) and Ed25519 keys sign and verify', async () => {
  const keyPem = await readFile(referenceFile('staker1.key'), 'utf8');
  const certDer = new Uint8Array(new X509Certificate(await readFile(referenceFile('staker1.crt'))).raw);
  const rsaKey = peerCertificate(certDer).publicKey;
  assert.is(rsaKey?.asymmetricKeyType, 'rsa');
  const claim = signIp(keyPem, { ip: '192.168.1.9', port: 9651, time: T });
  assert.is(claim.signature.length, 512);
  assert.ok(verifyIp(rsaKey, claim));
  assert.not.ok(verifyIp(rsaKey, { ...claim, port: 1 }));
  const ed = generateKeyPairSync('ed25519');
  const sig = stakingSigner(ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)(Uint8Array.of(1, 2, 3));
  assert.ok(verifySignature(ed.publicKey, Uint8Array.of(1, 2, 3), sig));
  assert.not.ok(verifySignature(ed.publicKey, Uint8Array.of(1, 2, 4), sig));
  assert.not.ok(verifySignature(rsaKey, Uint8Array.of(1, 2, 3), sig), 'a signature of another kind of key');
});

/** A PeerList entry of `cert`'s node, signed by `signer` (default: itself). */
function entry(cert: StakingCert, ip: string, port: number, time = T, signer: StakingCert = cert): PeerInfo {
  return { cert: cert.certDer, ip, port, time, signature: signIp(signer.keyPem, { ip, port, time }).signature };
}

function verifier(self: ShortId, o: { maxVerifications?: number; nowSeconds?: bigint } = {}) {
  return new ClaimVerifier({ selfId: self, now: () => Number(o.nowSeconds ?? T) * 1000, maxClockSkewSeconds: 60, maxVerifications: o.maxVerifications ?? 100 });
}

test('a PeerList\'s claims: believed when signed by the certificate\'s key; not when signed by another, forged, of garbage, of this node, or ahead of the clock', async () => {
  const [self, a, b, c, d] = await testCerts(5);
  const v = verifier(self!.nodeId);
  const entries: PeerInfo[] = [
    entry(a!, '10.0.0.1', 9651),
    entry(b!, '10.0.0.2', 9651, T, c!), // b's certificate, signed by c
    { ...entry(c!, '10.0.0.3', 9651), port: 9999 }, // signed for another port
    { ...entry(d!, '10.0.0.4', 9651), cert: Uint8Array.of(0x30, 0x03, 1, 2, 3) }, // not a certificate
    entry(self!, '10.0.0.5', 9651), // this node itself
    entry(d!, '10.0.0.6', 9651, T + 61n), // signed more than the skew ahead of this node's clock
  ];
  const r = v.check(entries, () => true);
  assert.equal(r.believed.map((x) => `${x.nodeId.toString()} ${x.ip}:${x.port}`), [`${a!.nodeId.toString()} 10.0.0.1:9651`]);
  assert.is(r.invalid, 3);
  assert.is(r.skipped, 0);
  assert.ok(v.check([entry(d!, '10.0.0.6', 9651, T + 60n)], () => true).believed.length === 1, 'within the skew');
});

test('a PeerList\'s claims: those not newer cost nothing; at most maxVerifications are checked per list', async () => {
  const [self, ...others] = await testCerts(8);
  const v = verifier(self!.nodeId, { maxVerifications: 3 });
  const entries = others.map((c, i) => entry(c, `10.0.1.${i + 1}`, 9651));
  const asked: string[] = [];
  const r = v.check(entries, (id) => (asked.push(id.toString()), id.equals(others[0]!.nodeId) === false));
  assert.is(asked.length, 7, 'each asked whether it is newer');
  assert.is(r.believed.length, 3);
  assert.is(r.skipped, 3, 'over the budget: not looked at');
  assert.not.ok(r.believed.some((x) => x.nodeId.equals(others[0]!.nodeId)), 'not newer: skipped without a check');
});

test('relayed: each peer\'s signed claim with its certificate; not an unspecified address or port 0; within the byte budget', async () => {
  const [a, b, c] = await testCerts(3);
  const info = (ip: string, port: number) => ({ listen: { ip, port }, ipTime: T, ipSignature: new Uint8Array(70) });
  const peers = [
    { nodeId: a!.nodeId, certDer: a!.certDer, info: info('10.0.0.1', 9651) },
    { nodeId: b!.nodeId, certDer: b!.certDer, info: info('0.0.0.0', 9651) },
    { nodeId: c!.nodeId, certDer: c!.certDer, info: info('10.0.0.3', 0) },
    { nodeId: c!.nodeId, certDer: c!.certDer, info: info('10.0.0.4', 9651) },
  ];
  const all = peerListEntries(peers, 1 << 20);
  assert.equal(all.map((e) => `${e.ip}:${e.port}`), ['10.0.0.1:9651', '10.0.0.4:9651']);
  assert.is(toHex(all[0]!.cert), toHex(a!.certDer));
  assert.is(all[0]!.time, T);
  const one = 64 + 34 + a!.certDer.length + 70;
  assert.is(peerListEntries(peers, one).length, 1, 'the budget holds one entry');
  assert.is(peerListEntries(peers, one - 1).length, 0);
});

test.run();
