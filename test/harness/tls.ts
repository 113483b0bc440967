// Certificates for TLS tests, made in this process (node:crypto keys, X.509 v3 certificates
// encoded here in DER and signed with ECDSA P-256/SHA-256; no openssl process) and written to a
// temporary directory: a CA, a server certificate for 127.0.0.1/localhost signed by it, a client
// certificate signed by it and a self-signed client certificate no one trusts; renewed server
// certificates on demand; a self-signed certificate with a given validity. The caller removes the
// directory.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate, createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface TestPki {
  dir: string;
  /** File names inside dir. */
  files: { ca: string; serverCert: string; serverKey: string };
  ca: string;
  client: { cert: string; key: string };
  rogue: { cert: string; key: string };
}

// --- DER (X.690) ---------------------------------------------------------------------------------

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const explicit = (n: number, item: Buffer) => der(0xa0 + n, item);
const octets = (b: Buffer) => der(0x04, b);
const bitString = (b: Buffer) => der(0x03, Buffer.concat([Buffer.from([0]), b]));
const bool = (v: boolean) => der(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));

/** A non-negative INTEGER from its big-endian bytes. */
function unsigned(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && b[1]! < 0x80) b = b.subarray(1);
  if (b[0]! >= 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return der(0x02, b);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift((x & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5), to the second. */
function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-01-02T03:04:05.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? der(0x17, Buffer.from(`${digits.slice(2)}Z`)) : der(0x18, Buffer.from(`${digits}Z`));
}

const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
const ECDSA_WITH_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

interface CertSpec {
  subject: string;
  /** The subject's key pair; the certificate is self-signed when no issuer is given. */
  key: { publicKey: KeyObject; privateKey: KeyObject };
  issuer?: { cn: string; privateKey: KeyObject; publicKey: KeyObject };
  notBefore: number;
  notAfter: number;
  ca?: boolean;
  dns?: string[];
  ips?: string[];
  /** Extended key usages: serverAuth, clientAuth. */
  eku?: ('serverAuth' | 'clientAuth')[];
}

const keyId = (k: KeyObject) => createHash('sha1').update(k.export({ type: 'spki', format: 'der' })).digest();

function certificate(spec: CertSpec): string {
  const issuer = spec.issuer ?? { cn: spec.subject, ...spec.key };
  const exts: Buffer[] = [];
  if (spec.ca) {
    exts.push(extension('2.5.29.19', true, seq(bool(true))));
    // keyCertSign (bit 5) and cRLSign (bit 6): 0b00000110, one unused bit.
    exts.push(extension('2.5.29.15', true, der(0x03, Buffer.from([1, 0x06]))));
  }
  const sans = [...(spec.dns ?? []).map((d) => der(0x82, Buffer.from(d))), ...(spec.ips ?? []).map((ip) => der(0x87, Buffer.from(ip.split('.').map(Number))))];
  if (sans.length) exts.push(extension('2.5.29.17', false, seq(...sans)));
  if (spec.eku?.length) exts.push(extension('2.5.29.37', false, seq(...spec.eku.map((u) => oid(u === 'serverAuth' ? '1.3.6.1.5.5.7.3.1' : '1.3.6.1.5.5.7.3.2')))));
  exts.push(extension('2.5.29.14', false, octets(keyId(spec.key.publicKey))));
  if (spec.issuer) exts.push(extension('2.5.29.35', false, seq(der(0x80, keyId(spec.issuer.publicKey)))));
  const tbs = seq(
    explicit(0, unsigned(Buffer.from([2]))), // v3
    unsigned(Buffer.concat([Buffer.from([0x40]), randomBytes(15)])), // positive, 16 bytes
    ECDSA_WITH_SHA256,
    name(issuer.cn),
    seq(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    spec.key.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, { key: issuer.privateKey, dsaEncoding: 'der' });
  const body = seq(tbs, ECDSA_WITH_SHA256, bitString(signature)).toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${body.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

const newKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;
const DAY = 86_400_000;

/** The CA of each PKI made here, by its directory (renewed certificates are signed by it). */
const cas = new Map<string, { cn: string; privateKey: KeyObject; publicKey: KeyObject }>();

/**
 * A self-signed certificate (PEM) for `cn` valid from `notBefore` to `notAfter` (ms since the
 * epoch; notAfter may lie before notBefore, as openssl x509 -days -1 makes it).
 */
export function selfSignedCertificate(cn: string, notBefore: number, notAfter: number): string {
  return certificate({ subject: cn, key: newKey(), notBefore, notAfter });
}

/**
 * A renewed server certificate: a fresh key and a certificate for 127.0.0.1/localhost signed by
 * the PKI's CA, written as `<name>.key` and `<name>.crt` in its directory; their texts and the
 * certificate's serial number.
 */
export async function renewServerCertificate(pki: TestPki, name: string): Promise<{ cert: string; key: string; serial: string }> {
  const ca = cas.get(pki.dir);
  if (!ca) throw new Error(`renewServerCertificate: ${pki.dir} is no PKI of makeTestPki`);
  const key = newKey();
  const now = Date.now();
  const cert = certificate({ subject: 'localhost', key, issuer: ca, notBefore: now, notAfter: now + 2 * DAY, dns: ['localhost'], ips: ['127.0.0.1'], eku: ['serverAuth'] });
  await writeFile(join(pki.dir, `${name}.key`), pem(key.privateKey), { mode: 0o600 });
  await writeFile(join(pki.dir, `${name}.crt`), cert);
  return { cert, key: pem(key.privateKey), serial: new X509Certificate(cert).serialNumber };
}

/** A web configuration file with `text`, in the PKI's directory (its relative paths name the PKI's files). */
export async function webConfigFile(pki: TestPki, text: string): Promise<string> {
  const file = join(pki.dir, `web-${Math.random().toString(36).slice(2)}.yml`);
  await writeFile(file, text);
  return file;
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'eoswatch-pki-'));
  const now = Date.now();
  const valid = { notBefore: now, notAfter: now + 2 * DAY };
  const caKey = newKey();
  const ca = { cn: 'eoswatch test CA', ...caKey };
  cas.set(dir, ca);
  const write = async (file: string, key: { privateKey: KeyObject }, cert: string) => {
    await writeFile(join(dir, `${file}.key`), pem(key.privateKey), { mode: 0o600 });
    await writeFile(join(dir, `${file}.crt`), cert);
  };
  await write('ca', caKey, certificate({ subject: ca.cn, key: caKey, ca: true, ...valid }));
  const server = newKey();
  await write('server', server, certificate({ subject: 'localhost', key: server, issuer: ca, ...valid, dns: ['localhost'], ips: ['127.0.0.1'], eku: ['serverAuth'] }));
  const client = newKey();
  await write('client', client, certificate({ subject: 'prometheus', key: client, issuer: ca, ...valid, dns: ['prometheus.monitoring.svc'], eku: ['clientAuth'] }));
  const rogue = newKey();
  await write('rogue', rogue, certificate({ subject: 'prometheus', key: rogue, ...valid, dns: ['prometheus.monitoring.svc'] }));
  const text = (f: string) => readFile(join(dir, f), 'utf8');
  return {
    dir,
    files: { ca: 'ca.crt', serverCert: 'server.crt', serverKey: 'server.key' },
    ca: await text('ca.crt'),
    client: { cert: await text('client.crt'), key: await text('client.key') },
    rogue: { cert: await text('rogue.crt'), key: await text('rogue.key') },
  };
}
