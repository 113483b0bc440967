// A secured local cluster (ClusterOptions.security): a private CA and one certificate per broker
// made with openssl, a SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN, unsecured-JWT OAUTHBEARER) or SSL client listener,
// optional mutual TLS, StandardAuthorizer with deny-by-default and an admin super user. Keys and
// passwords are written only inside the cluster's directory (which `down` removes) and are never
// printed: the broker masks its password-typed settings in its log, and nothing here logs.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import { EosError, ErrorCodes } from '../../src/errors.js';

const run = promisify(execFile);

/** plaintext: no security (the default, unchanged); sasl-ssl: SCRAM/PLAIN over TLS; ssl: TLS with the client certificate as the identity. */
export type SecurityMode = 'plaintext' | 'sasl-ssl' | 'ssl';
export const SECURITY_MODES: readonly SecurityMode[] = ['plaintext', 'sasl-ssl', 'ssl'];

export interface SecurityOptions {
  mode: SecurityMode;
  /** sasl-ssl: also require a client certificate from the cluster's CA (the ssl mode always does). */
  mtls?: boolean;
  /** Users besides the admin, each with a generated password (SCRAM-SHA-512/256 and PLAIN) and a client certificate (CN=name). */
  users?: string[];
}

export type SaslMechanism = 'scram-sha-512' | 'scram-sha-256' | 'plain';

/** What the state file records of a secured cluster: paths inside its directory and the generated passwords. */
export interface SecurityState {
  mode: Exclude<SecurityMode, 'plaintext'>;
  mtls: boolean;
  /** The PKI directory: ca.crt, <node>.key/.crt per broker, <user>.key/.crt per user. */
  pkiDir: string;
  admin: string;
  /** name -> password (the admin's too). */
  passwords: Record<string, string>;
}

export const ADMIN_USER = 'admin';
const USER_NAME = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

export function normaliseSecurity(s: SecurityMode | SecurityOptions | undefined): SecurityOptions {
  const o = typeof s === 'string' ? { mode: s } : (s ?? { mode: 'plaintext' as const });
  if (!SECURITY_MODES.includes(o.mode)) throw new EosError(ErrorCodes.USAGE, `security: expected one of ${SECURITY_MODES.join(', ')}, found "${String(o.mode)}"`);
  for (const u of o.users ?? []) {
    if (!USER_NAME.test(u)) throw new EosError(ErrorCodes.USAGE, `security.users: "${u}" is not a user name (letters, digits, . _ -, starting with a letter)`);
    if (u === ADMIN_USER) throw new EosError(ErrorCodes.USAGE, `security.users: "${ADMIN_USER}" is the cluster's super user and always exists`);
  }
  return o;
}

function password(): string {
  return randomBytes(18).toString('base64url');
}

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run('openssl', args, { cwd: dir });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new EosError(ErrorCodes.HARNESS_FAILED, `openssl ${args[0]} failed (is openssl installed?): ${e.stderr ?? e.message}`, { cause: err });
  }
}

/** A key (EC P-256, PKCS#8) and a certificate for `cn` signed by the CA in dir, with the given extensions. */
async function signed(dir: string, name: string, cn: string, ext: string[]): Promise<void> {
  await openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  await openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${cn}`, '-out', `${name}.csr`]);
  await writeFile(join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
  await openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '30', '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
}

/**
 * Makes the CA, a server certificate per node (SAN 127.0.0.1, localhost and the node's own
 * address), a client certificate per user and the passwords. Everything under dir/pki, mode 0600.
 */
export async function createSecurity(dir: string, opts: SecurityOptions, hosts: string[]): Promise<SecurityState> {
  if (opts.mode === 'plaintext') throw new Error('createSecurity: plaintext needs no security state');
  const pkiDir = join(dir, 'pki');
  await mkdir(pkiDir, { recursive: true, mode: 0o700 });
  await openssl(pkiDir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'ca.key']);
  await openssl(pkiDir, ['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=eoswatch local cluster CA', '-days', '30', '-out', 'ca.crt', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const users = [ADMIN_USER, ...(opts.users ?? [])];
  // One at a time: the serial file of the CA is shared.
  for (const [i, host] of hosts.entries()) {
    const san = [...new Set(['IP:127.0.0.1', 'DNS:localhost', /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `IP:${host}` : `DNS:${host}`])].join(',');
    // Brokers are also clients of each other (inter-broker listener, mTLS): both usages.
    await signed(pkiDir, `node-${i + 1}`, `node-${i + 1}`, [`subjectAltName=${san}`, 'extendedKeyUsage=serverAuth,clientAuth']);
  }
  for (const u of users) await signed(pkiDir, `user-${u}`, u, ['extendedKeyUsage=clientAuth']);
  const { readdir } = await import('node:fs/promises');
  for (const f of await readdir(pkiDir)) await chmod(join(pkiDir, f), 0o600);
  return {
    mode: opts.mode,
    mtls: opts.mode === 'ssl' || Boolean(opts.mtls),
    pkiDir,
    admin: ADMIN_USER,
    passwords: Object.fromEntries(users.map((u) => [u, password()])),
  };
}

/**
 * A client certificate for `user` signed by the cluster's CA whose validity ended in the past
 * (1 Jan to 1 Feb 2020), with the user's own key: what a client presents when nobody renewed its
 * certificate. `openssl ca` because `openssl x509` of OpenSSL 3.0 cannot date a certificate in
 * the past. Files: <pki>/user-<user>-expired.crt and the user's key.
 */
export async function issueExpiredCertificate(sec: SecurityState, user: string): Promise<{ certFile: string; keyFile: string }> {
  const f = userFiles(sec, user);
  const dir = join(sec.pkiDir, `expired-${user}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, 'index.txt'), '');
  await writeFile(join(dir, 'serial'), `${randomBytes(8).toString('hex')}\n`);
  await writeFile(
    join(dir, 'ca.cnf'),
    ['[ca]', 'default_ca = local', '[local]', 'database = index.txt', 'new_certs_dir = .', 'serial = serial', 'default_md = sha256', 'policy = any', 'unique_subject = no', '[any]', 'commonName = supplied', '[ext]', 'extendedKeyUsage = clientAuth', ''].join('\n'),
  );
  await openssl(dir, ['req', '-new', '-key', f.keyFile, '-subj', `/CN=${user}`, '-out', 'user.csr']);
  const certFile = join(sec.pkiDir, `user-${user}-expired.crt`);
  await openssl(dir, ['ca', '-batch', '-config', 'ca.cnf', '-cert', f.caFile, '-keyfile', join(sec.pkiDir, 'ca.key'), '-in', 'user.csr', '-out', certFile, '-startdate', '20200101000000Z', '-enddate', '20200201000000Z', '-extensions', 'ext', '-notext']);
  await chmod(certFile, 0o600);
  return { certFile, keyFile: f.keyFile };
}

/** A Java properties value: backslashes, newlines and the separators escaped. Pure. */
export function propValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '');
}

function jaasQuote(v: string): string {
  if (/["\\]/.test(v)) throw new Error('a generated password holds a character JAAS cannot quote');
  return `"${v}"`;
}

/** The listener name of the client (and inter-broker) listener. */
export function listenerName(sec: SecurityState | undefined): 'PLAINTEXT' | 'SASL_SSL' | 'SSL' {
  return !sec ? 'PLAINTEXT' : sec.mode === 'ssl' ? 'SSL' : 'SASL_SSL';
}

/**
 * The broker properties of a secured node (after the listener lines cluster.ts writes): TLS with
 * PEM stores, SASL mechanisms, the authorizer. `keyPem`/`certPem`: the node's key and
 * certificate, inline (a PEM key store file would need an encrypted key). Pure.
 */
export function securityProperties(sec: SecurityState, node: { keyPem: string; certPem: string }, brokers = 1): Record<string, string> {
  const l = listenerName(sec).toLowerCase();
  const props: Record<string, string> = {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.key': node.keyPem.trim(),
    'ssl.keystore.certificate.chain': node.certPem.trim(),
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': join(sec.pkiDir, 'ca.crt'),
    'ssl.endpoint.identification.algorithm': 'https',
    // On a SASL_SSL listener plain ssl.client.auth is ignored: the listener-prefixed key counts.
    [`listener.name.${l}.ssl.client.auth`]: sec.mtls ? 'required' : 'none',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found': 'false',
    // ANONYMOUS: the PLAINTEXT controller listener (a broker never registers without it).
    'super.users': `User:${sec.admin};User:ANONYMOUS`,
  };
  if (sec.mode === 'ssl') {
    // The certificate is the identity: CN=name becomes User:name. The brokers talk to each other
    // over this listener as User:node-<id>: without super user rights the coordinator's own
    // WriteTxnMarkers (ClusterAction) is refused and no transaction ever completes.
    props['ssl.principal.mapping.rules'] = 'RULE:^CN=([^,]+)$/$1/,DEFAULT';
    props['super.users'] = [props['super.users'], ...Array.from({ length: brokers }, (_, i) => `User:node-${i + 1}`)].join(';');
    return props;
  }
  const plainUsers = Object.entries(sec.passwords).map(([u, p]) => `user_${u}=${jaasQuote(p)}`).join(' ');
  Object.assign(props, {
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER',
    // Inter-broker over PLAIN: its users are in the JAAS line, so it works before any SCRAM credential is read.
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    [`listener.name.${l}.plain.sasl.jaas.config`]: `org.apache.kafka.common.security.plain.PlainLoginModule required username=${jaasQuote(sec.admin)} password=${jaasQuote(sec.passwords[sec.admin]!)} ${plainUsers};`,
    [`listener.name.${l}.scram-sha-512.sasl.jaas.config`]: 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    [`listener.name.${l}.scram-sha-256.sasl.jaas.config`]: 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    // OAUTHBEARER with Kafka's built-in validator of unsecured JWTs (the default server callback
    // handler): a token {"alg":"none"} whose `sub` is the principal and whose `exp` has not passed
    // (unsecuredJwt below) authenticates as User:<sub>. For tests only: anyone can write such a
    // token. The login claim is the broker's own token, which nothing uses (inter-broker is PLAIN).
    [`listener.name.${l}.oauthbearer.sasl.jaas.config`]: `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=${jaasQuote(sec.admin)};`,
  });
  return props;
}

/**
 * An unsecured JWT (header {"alg":"none"}, empty signature) for the local cluster's OAUTHBEARER
 * validator: `sub` is the principal's name (User:<sub>), `exp` when it stops being accepted
 * (seconds since the epoch), `iat` one minute before `now`, or before exp when that is earlier. Pure.
 */
export function unsecuredJwt(sub: string, expSeconds: number, nowMs: number = Date.now()): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.min(Math.floor(nowMs / 1000) - 60, expSeconds - 1);
  return `${part({ alg: 'none' })}.${part({ sub, iat, exp: expSeconds })}.`;
}

/** `kafka-storage format --add-scram` arguments: every user's SCRAM-SHA-512 and -256 credential. */
export function scramFormatArgs(sec: SecurityState): string[] {
  if (sec.mode === 'ssl') return [];
  return Object.entries(sec.passwords).flatMap(([u, p]) => ['SCRAM-SHA-512', 'SCRAM-SHA-256'].flatMap((m) => ['--add-scram', `${m}=[name=${u},password=${p}]`]));
}

export async function nodePem(sec: SecurityState, id: number): Promise<{ keyPem: string; certPem: string }> {
  return {
    keyPem: await readFile(join(sec.pkiDir, `node-${id}.key`), 'utf8'),
    certPem: await readFile(join(sec.pkiDir, `node-${id}.crt`), 'utf8'),
  };
}

/** Files of a user's client identity (the admin's by default). */
export function userFiles(sec: SecurityState, user: string = sec.admin): { caFile: string; certFile: string; keyFile: string } {
  if (!(user in sec.passwords)) throw new EosError(ErrorCodes.USAGE, `no user "${user}" in this cluster (users: ${Object.keys(sec.passwords).join(', ')})`);
  return { caFile: join(sec.pkiDir, 'ca.crt'), certFile: join(sec.pkiDir, `user-${user}.crt`), keyFile: join(sec.pkiDir, `user-${user}.key`) };
}

export interface ClientIdentity {
  user?: string;
  mechanism?: SaslMechanism;
  /** Present the user's client certificate (always in the ssl mode). */
  cert?: boolean;
}

/** kafkajs ssl and sasl options for a user of the cluster (the admin by default). */
export async function kafkajsSecurity(sec: SecurityState | undefined, id: ClientIdentity = {}): Promise<{ ssl?: ConnectionOptions; sasl?: SASLOptions }> {
  if (!sec) return {};
  const user = id.user ?? sec.admin;
  const f = userFiles(sec, user);
  const ssl: ConnectionOptions = { ca: [await readFile(f.caFile)] };
  if (sec.mode === 'ssl' || id.cert || sec.mtls) {
    ssl.cert = await readFile(f.certFile);
    ssl.key = await readFile(f.keyFile);
  }
  if (sec.mode === 'ssl') return { ssl };
  return { ssl, sasl: { mechanism: id.mechanism ?? 'scram-sha-512', username: user, password: sec.passwords[user]! } as SASLOptions };
}

/** The `kafka:` section of an eoswatch config for a user of the cluster (files, not texts, as an operator would write it). */
export function eoswatchKafkaSection(sec: SecurityState | undefined, brokers: string[], id: ClientIdentity = {}): Record<string, unknown> {
  if (!sec) return { brokers };
  const user = id.user ?? sec.admin;
  const f = userFiles(sec, user);
  const withCert = sec.mode === 'ssl' || id.cert || sec.mtls;
  return {
    brokers,
    ssl: { enabled: true, caFile: f.caFile, ...(withCert ? { certFile: f.certFile, keyFile: f.keyFile } : {}) },
    ...(sec.mode === 'ssl' ? {} : { sasl: { mechanism: id.mechanism ?? 'scram-sha-512', username: user, password: sec.passwords[user]! } }),
  };
}
