/**
 * The node's staking TLS certificate and the node ID derived from it (DESIGN §5, reference §2.5).
 *
 * - Node ID = RIPEMD160(SHA256(DER of the certificate)), a ShortId written as cb58.
 * - On first start (both files missing) an ECDSA P-256 key and a self-signed X.509 v3 certificate
 *   (CN=cornice, valid from a day ago for 100 years) are generated and written: the key as PKCS#8 PEM
 *   with mode 0600, the certificate as PEM with mode 0644, creating missing directories 0700.
 * - Existing files are loaded whatever their key type (RSA certificates of other tools work), and
 *   must parse and match; anything else is a StakingError naming the file.
 */
import {
  X509Certificate,
  createPrivateKey,
  generateKeyPair,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { NodeError, ShortId, ripemd160, sha256 } from '@cornice/sdk';
import { bitString, boolean, explicit, integer, octetString, oid, sequence, set, time, utf8String } from './asn1.js';

export type StakingErrorCode = 'MissingFile' | 'InvalidCert' | 'InvalidKey' | 'KeyMismatch' | 'Io';

/** The staking certificate or key cannot be used; the message names the file. */
export class StakingError extends NodeError<StakingErrorCode> {}

export interface StakingCert {
  /** The certificate, PEM. */
  certPem: string;
  /** The private key, PKCS#8 PEM. Never log it. */
  keyPem: string;
  /** The certificate's DER bytes (what the node ID hashes and what TLS peers see). */
  certDer: Uint8Array;
  nodeId: ShortId;
}

export interface StakingCertFiles {
  certFile: string;
  keyFile: string;
}

export interface GenerateOptions {
  /** The generation time (default: now); the certificate is valid from a day before it. */
  now?: Date;
  /** Subject and issuer common name (default `cornice`). */
  commonName?: string;
  /** Validity after `now`, in years (default 100). */
  validityYears?: number;
}

/** RIPEMD160(SHA256(der)): the node ID of a staking certificate. */
export function nodeIdFromCert(der: Uint8Array): ShortId {
  return ShortId.fromBytes(ripemd160(sha256(der)));
}

// ---------------------------------------------------------------------------------------------
// Generation

const OID_ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2'; // ecdsa-with-SHA256
const OID_COMMON_NAME = '2.5.4.3';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const DAY_MS = 24 * 60 * 60 * 1000;

function pem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** Whole seconds: X.509 times carry no fractions. */
function truncateToSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/** A random positive serial of exactly 16 bytes (top bit clear, next bit set). */
function randomSerial(): Uint8Array {
  const serial = new Uint8Array(randomBytes(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  return serial;
}

function distinguishedName(commonName: string): Uint8Array {
  return sequence(set(sequence(oid(OID_COMMON_NAME), utf8String(commonName))));
}

/** The DER of a self-signed X.509 v3 certificate for `publicKey`, signed by `privateKey` (ECDSA). */
export function buildSelfSignedCert(
  publicKey: KeyObject,
  privateKey: KeyObject,
  opts: { notBefore: Date; notAfter: Date; commonName: string; serial: Uint8Array },
): Uint8Array {
  const algorithm = sequence(oid(OID_ECDSA_WITH_SHA256));
  const name = distinguishedName(opts.commonName);
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  // basicConstraints, critical, CA:FALSE (an empty SEQUENCE: cA defaults to FALSE).
  const basicConstraints = sequence(oid(OID_BASIC_CONSTRAINTS), boolean(true), octetString(sequence()));
  const tbs = sequence(
    explicit(0, integer(2)), // version v3
    integer(opts.serial),
    algorithm,
    name, // issuer
    sequence(time(opts.notBefore), time(opts.notAfter)),
    name, // subject
    spki,
    explicit(3, sequence(basicConstraints)),
  );
  const signature = new Uint8Array(sign('sha256', tbs, privateKey)); // DER ECDSA-Sig-Value
  return sequence(tbs, algorithm, bitString(signature));
}

function generateP256(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    generateKeyPair('ec', { namedCurve: 'P-256' }, (err, publicKey, privateKey) => {
      if (err) reject(err);
      else resolve({ publicKey, privateKey });
    });
  });
}

/** A new ECDSA P-256 key and self-signed certificate (not written anywhere). */
export async function generateStakingCert(opts: GenerateOptions = {}): Promise<StakingCert> {
  const now = opts.now ?? new Date();
  const notAfter = new Date(now.getTime());
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + (opts.validityYears ?? 100));
  const { publicKey, privateKey } = await generateP256();
  const certDer = buildSelfSignedCert(publicKey, privateKey, {
    notBefore: truncateToSeconds(now.getTime() - DAY_MS),
    notAfter: truncateToSeconds(notAfter.getTime()),
    commonName: opts.commonName ?? 'cornice',
    serial: randomSerial(),
  });
  return {
    certPem: pem('CERTIFICATE', certDer),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certDer,
    nodeId: nodeIdFromCert(certDer),
  };
}

// ---------------------------------------------------------------------------------------------
// Files

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw new StakingError('Io', `cannot access ${path}: ${errorText(err)}`, { path });
  }
}

async function readOrThrow(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new StakingError('Io', `cannot read staking ${what} ${path}: ${errorText(err)}`, { path });
  }
}

/** Reads and checks an existing certificate and key. */
export async function loadStakingCert(files: StakingCertFiles): Promise<StakingCert> {
  const { certFile, keyFile } = files;
  const certBytes = await readOrThrow(certFile, 'certificate');
  const keyBytes = await readOrThrow(keyFile, 'key');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certBytes);
  } catch (err) {
    throw new StakingError('InvalidCert', `cannot parse staking certificate ${certFile}: ${errorText(err)}`, {
      path: certFile,
    });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyBytes);
  } catch (err) {
    throw new StakingError('InvalidKey', `cannot parse staking key ${keyFile}: ${errorText(err)}`, { path: keyFile });
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(key);
  } catch {
    matches = false;
  }
  if (!matches) {
    throw new StakingError('KeyMismatch', `staking key ${keyFile} does not match the certificate ${certFile}`, {
      certFile,
      keyFile,
    });
  }
  const certDer = new Uint8Array(cert.raw);
  return {
    certPem: cert.toString(),
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    certDer,
    nodeId: nodeIdFromCert(certDer),
  };
}

/** Writes `text` to `path` through a temporary file in the same directory, then sets `mode`. */
async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(tmp, text, { mode, flag: 'wx' });
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw new StakingError('Io', `cannot write ${path}: ${errorText(err)}`, { path });
  }
}

/** Creates a new certificate and key at the given paths (both must be missing). */
async function createStakingCert(files: StakingCertFiles, opts: GenerateOptions): Promise<StakingCert> {
  const generated = await generateStakingCert(opts);
  for (const dir of [dirname(files.keyFile), dirname(files.certFile)]) {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new StakingError('Io', `cannot create directory ${dir}: ${errorText(err)}`, { path: dir });
    }
  }
  await writeFileAtomic(files.keyFile, generated.keyPem, 0o600);
  await writeFileAtomic(files.certFile, generated.certPem, 0o644);
  return generated;
}

/**
 * Loads the staking certificate and key, or generates and writes both when both files are missing.
 * Exactly one missing, an unparseable file or a key that does not match is a StakingError.
 */
export async function loadOrCreateStakingCert(files: StakingCertFiles, opts: GenerateOptions = {}): Promise<StakingCert> {
  const [haveCert, haveKey] = await Promise.all([exists(files.certFile), exists(files.keyFile)]);
  if (!haveCert && !haveKey) return createStakingCert(files, opts);
  if (!haveKey) {
    throw new StakingError(
      'MissingFile',
      `staking key ${files.keyFile} is missing but the certificate ${files.certFile} exists (restore the key, or remove both to generate a new node ID)`,
      { path: files.keyFile },
    );
  }
  if (!haveCert) {
    throw new StakingError(
      'MissingFile',
      `staking certificate ${files.certFile} is missing but the key ${files.keyFile} exists (restore the certificate, or remove both to generate a new node ID)`,
      { path: files.certFile },
    );
  }
  return loadStakingCert(files);
}
