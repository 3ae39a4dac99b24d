/**
 * The node's staking TLS certificate and the node ID derived from it.
 *
 * - Node ID = RIPEMD160(SHA256(DER of the certificate)), a ShortId written as cb58.
 * - On first start (both files missing) an ECDSA P-256 key and a self-signed X.509 v3 certificate
 *   (CN=cornice, valid from a day ago for 100 years) are generated and written: the key as PKCS#8 PEM
 *   with mode 0600, the certificate as PEM with mode 0644, creating missing directories 0700.
 * - Existing files are loaded whatever their key type (RSA certificates of other tools work), and
 *   must parse and match; anything else is a StakingError naming the file.
 * - A peer's certificate (the DER a TLS socket reports) is parsed by `peerCertificate`, which gives
 *   its node ID or a StakingError InvalidCert.
 *
 * Certificates are built and parsed by @peculiar/x509 (through ./x509.js) on node's WebCrypto;
 * private keys are read by node:crypto.
 */
import { createPrivateKey, createPublicKey, randomBytes, webcrypto, type KeyObject } from 'node:crypto';
import { chmod, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { NodeError, ShortId, ripemd160, sha256 } from '@cornice/sdk';
import { BasicConstraintsExtension, Name, PemConverter, X509Certificate, X509CertificateGenerator } from './x509.js';

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
// Parsing

/** The largest certificate accepted, in DER bytes (staking certificates are 0.3-2 KB). */
export const MAX_CERT_BYTES = 16 * 1024;

/** Limits for the ASN.1 reader on untrusted bytes (already bounded by MAX_CERT_BYTES). */
const PARSE_OPTIONS = { berOptions: { maxDepth: 32, maxNodes: 4096, maxContentLength: MAX_CERT_BYTES } };

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The size of the DER element that starts `der` (header and contents), or undefined when its length is
 * not a DER one (indefinite, or more than 3 bytes: beyond MAX_CERT_BYTES anyway). The library reads one
 * element and ignores what follows it; the node ID hashes every byte, so trailing bytes are refused here.
 */
function elementSize(der: Uint8Array): number | undefined {
  const first = der[1];
  if (first === undefined) return undefined;
  if (first < 0x80) return 2 + first;
  const n = first & 0x7f;
  if (n === 0 || n > 3 || der.length < 2 + n) return undefined;
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + der[2 + i]!;
  return 2 + n + len;
}

/** Why `der` is not exactly one X.509 certificate, or the parsed certificate. */
function parseDer(der: Uint8Array): X509Certificate | string {
  if (der.byteLength === 0) return 'no bytes';
  if (der.byteLength > MAX_CERT_BYTES) return `${der.byteLength} bytes, more than the ${MAX_CERT_BYTES} allowed`;
  if (der[0] !== 0x30) return 'it does not start with a DER SEQUENCE';
  const size = elementSize(der);
  if (size === undefined) return 'its length is not a definite DER length';
  if (size < der.byteLength) return `${der.byteLength - size} bytes follow the certificate`;
  try {
    const cert = new X509Certificate(der, PARSE_OPTIONS);
    // Touch the lazily decoded parts a caller reads, so that they fail here and not later.
    void cert.notBefore;
    void cert.notAfter;
    void cert.publicKey.rawData;
    return cert;
  } catch (err) {
    return errorText(err);
  }
}

/** What the node learns from a peer's certificate. */
export interface PeerCertificate {
  /** RIPEMD160(SHA256(der)): the peer's node ID. */
  nodeId: ShortId;
  /** A copy of the DER bytes. */
  der: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** Its public key as node:crypto uses it (to check what the peer signed); undefined when node cannot use that kind of key. */
  publicKey: KeyObject | undefined;
}

/**
 * Parses a peer's certificate, as DER (`socket.getPeerCertificate(true).raw`), and derives its node
 * ID. Anything but exactly one X.509 certificate of at most MAX_CERT_BYTES is StakingError InvalidCert.
 */
export function peerCertificate(der: Uint8Array | undefined): PeerCertificate {
  if (!(der instanceof Uint8Array)) throw new StakingError('InvalidCert', 'the peer sent no certificate');
  // Checked before the copy; the copy detaches the bytes from a larger buffer they may be a view of.
  const bytes = der.byteLength > MAX_CERT_BYTES ? der : new Uint8Array(der);
  const cert = parseDer(bytes);
  if (typeof cert === 'string') {
    throw new StakingError('InvalidCert', `the peer certificate is not an X.509 certificate: ${cert}`, {
      bytes: der.byteLength,
    });
  }
  let publicKey: KeyObject | undefined;
  try {
    publicKey = createPublicKey({ key: Buffer.from(cert.publicKey.rawData), format: 'der', type: 'spki' });
  } catch {
    publicKey = undefined;
  }
  return { nodeId: nodeIdFromCert(bytes), der: bytes, notBefore: cert.notBefore, notAfter: cert.notAfter, publicKey };
}

// ---------------------------------------------------------------------------------------------
// Generation

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** PEM with 64-character lines and a final newline. */
function pem(tag: string, der: Uint8Array): string {
  return `${PemConverter.encode(der, tag)}\n`;
}

/** Whole seconds: X.509 times carry no fractions. */
function truncateToSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/** A random positive serial of exactly 16 bytes (top bit clear, next bit set), in hex. */
function randomSerial(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  return serial.toString('hex');
}

/** A new ECDSA P-256 key and self-signed certificate (not written anywhere). */
export async function generateStakingCert(opts: GenerateOptions = {}): Promise<StakingCert> {
  const now = opts.now ?? new Date();
  const notAfter = new Date(now.getTime());
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + (opts.validityYears ?? 100));
  const keys = await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify']);
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      // A typed value is taken as is (a plain string would be read as an RFC 2253 escaped one).
      name: new Name([{ CN: [{ utf8String: opts.commonName ?? 'cornice' }] }]),
      notBefore: truncateToSeconds(now.getTime() - DAY_MS),
      notAfter: truncateToSeconds(notAfter.getTime()),
      keys,
      signingAlgorithm: ECDSA_SHA256,
      extensions: [new BasicConstraintsExtension(false, undefined, true)], // critical, CA:FALSE
    },
    webcrypto,
  );
  const certDer = new Uint8Array(cert.rawData);
  const pkcs8 = new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    certPem: pem(PemConverter.CertificateTag, certDer),
    keyPem: pem(PemConverter.PrivateKeyTag, pkcs8),
    certDer,
    nodeId: nodeIdFromCert(certDer),
  };
}

// ---------------------------------------------------------------------------------------------
// Files

/** The largest staking certificate or key file read (a PEM of MAX_CERT_BYTES is ~22 KiB). */
const MAX_FILE_BYTES = 64 * 1024;

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

/** Reads a staking file of at most MAX_FILE_BYTES; a larger one is `tooLarge`. */
async function readStakingFile(path: string, what: string, tooLarge: StakingErrorCode): Promise<Buffer> {
  let bytes: Buffer;
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      if (size > MAX_FILE_BYTES) {
        throw new StakingError(tooLarge, `staking ${what} ${path} is ${size} bytes, more than the ${MAX_FILE_BYTES} allowed`, {
          path,
        });
      }
      bytes = await file.readFile();
    } finally {
      await file.close();
    }
  } catch (err) {
    if (err instanceof StakingError) throw err;
    throw new StakingError('Io', `cannot read staking ${what} ${path}: ${errorText(err)}`, { path });
  }
  return bytes;
}

/** The certificate in a PEM or DER file. */
function certificateFromFile(bytes: Uint8Array, path: string): X509Certificate {
  let der: Uint8Array | string;
  const text = Buffer.from(bytes).toString('utf8');
  if (PemConverter.isPem(text)) {
    try {
      const block = PemConverter.decodeWithHeaders(text).find((b) => b.type === PemConverter.CertificateTag);
      der = block ? new Uint8Array(block.rawData) : 'no CERTIFICATE block in the PEM';
    } catch (err) {
      der = errorText(err);
    }
  } else {
    der = bytes;
  }
  const cert = typeof der === 'string' ? der : parseDer(der);
  if (typeof cert === 'string') {
    throw new StakingError('InvalidCert', `cannot parse staking certificate ${path}: ${cert}`, { path });
  }
  return cert;
}

/**
 * Whether the certificate's public key is the public half of `key`. Both are compared as node's SPKI
 * export: KeyObject.equals on keys of different types leaves an OpenSSL error queued (node 20) that
 * makes the next createPrivateKey fail.
 */
function keyMatches(cert: X509Certificate, key: KeyObject): boolean {
  const spki = (k: KeyObject): Buffer => k.export({ type: 'spki', format: 'der' });
  try {
    const certKey = createPublicKey({ key: Buffer.from(cert.publicKey.rawData), format: 'der', type: 'spki' });
    return spki(certKey).equals(spki(createPublicKey(key)));
  } catch {
    return false;
  }
}

/** Reads and checks an existing certificate and key. */
export async function loadStakingCert(files: StakingCertFiles): Promise<StakingCert> {
  const { certFile, keyFile } = files;
  const certBytes = await readStakingFile(certFile, 'certificate', 'InvalidCert');
  const keyBytes = await readStakingFile(keyFile, 'key', 'InvalidKey');
  const cert = certificateFromFile(certBytes, certFile);
  let key: KeyObject;
  try {
    key = createPrivateKey(keyBytes);
  } catch (err) {
    throw new StakingError('InvalidKey', `cannot parse staking key ${keyFile}: ${errorText(err)}`, { path: keyFile });
  }
  if (!keyMatches(cert, key)) {
    throw new StakingError('KeyMismatch', `staking key ${keyFile} does not match the certificate ${certFile}`, {
      certFile,
      keyFile,
    });
  }
  const certDer = new Uint8Array(cert.rawData);
  return {
    certPem: pem(PemConverter.CertificateTag, certDer),
    keyPem: pem(PemConverter.PrivateKeyTag, key.export({ type: 'pkcs8', format: 'der' })),
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
