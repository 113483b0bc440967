// The web configuration file of the Prometheus exporter toolkit (`--web.config.file`, as
// node_exporter and Prometheus take it): TLS, client certificates, basic auth with bcrypt hashes,
// extra response headers, a request rate limit and the paths served without authentication.
// Read at start, where every problem is a configuration error (exit 2) naming the file, the line
// and the key, then again every http.webConfigReloadInterval (src/http/web-reload.ts), where a
// problem is logged and the running configuration kept. Relative paths are relative to the
// file's directory, as in the toolkit.
import { readFile } from 'node:fs/promises';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { dirname, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { Document, LineCounter } from 'yaml';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import { formatSchemaErrors, parseYamlText } from '../config/load.js';
import { parseDuration } from '../config/duration.js';

export type ClientAuthType = 'NoClientCert' | 'RequestClientCert' | 'RequireAnyClientCert' | 'VerifyClientCertIfGiven' | 'RequireAndVerifyClientCert';

export interface WebTls {
  cert: string;
  key: string;
  /** CAs that sign client certificates. */
  clientCa?: string;
  clientAuth: ClientAuthType;
  /** A client certificate must carry one of these subject alternative names. */
  clientAllowedSans?: string[];
  minVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  maxVersion: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
  /** OpenSSL cipher list, when cipher_suites narrows the default. */
  ciphers?: string;
  ecdhCurve?: string;
  honorCipherOrder: boolean;
}

export interface WebConfig {
  file: string;
  tls?: WebTls;
  /** user → bcrypt hash; empty: no basic auth. */
  users: Map<string, string>;
  headers: Record<string, string>;
  rateLimit?: { burst: number; intervalMs: number };
  /** Served without authentication (basic auth and client certificate). */
  authExcludedPaths: string[];
}

/**
 * The probe endpoints stay open unless the file lists auth_excluded_paths itself: a kubelet
 * probe carries no credentials (its headers would put the password in the pod spec) and no
 * client certificate. /healthz says only "ok"; /readyz without credentials only its status.
 */
export const DEFAULT_AUTH_EXCLUDED_PATHS = ['/healthz', '/readyz'];

const CLIENT_AUTH: Record<string, ClientAuthType> = {
  NoClientCert: 'NoClientCert',
  '': 'NoClientCert',
  RequestClientCert: 'RequestClientCert',
  RequireAnyClientCert: 'RequireAnyClientCert',
  // The toolkit's old name, kept for compatibility as it does.
  RequireClientCert: 'RequireAnyClientCert',
  VerifyClientCertIfGiven: 'VerifyClientCertIfGiven',
  RequireAndVerifyClientCert: 'RequireAndVerifyClientCert',
};
const TLS_VERSIONS = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' } as const;
/** Go's names of the TLS 1.2 suites its default list holds, as OpenSSL names them (TLS 1.3 suites are not configurable, in Go neither). */
const CIPHERS: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
};
const TLS13_CIPHERS = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256';
const CURVES: Record<string, string> = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' };
/** The toolkit allows these response headers only, some with fixed values. */
const HEADERS: Record<string, string[] | null> = {
  'Strict-Transport-Security': null,
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': null,
  'Content-Security-Policy': null,
};
const BCRYPT = /^\$2[abxy]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

const webSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tls_server_config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cert_file: { type: 'string' },
        key_file: { type: 'string' },
        cert: { type: 'string' },
        key: { type: 'string' },
        client_ca_file: { type: 'string' },
        client_ca: { type: 'string' },
        client_auth_type: { type: 'string', enum: Object.keys(CLIENT_AUTH) },
        client_allowed_sans: { type: 'array', items: { type: 'string', minLength: 1 } },
        min_version: { type: 'string', enum: Object.keys(TLS_VERSIONS) },
        max_version: { type: 'string', enum: Object.keys(TLS_VERSIONS) },
        cipher_suites: { type: 'array', items: { type: 'string', enum: Object.keys(CIPHERS) } },
        curve_preferences: { type: 'array', items: { type: 'string', enum: Object.keys(CURVES) } },
        prefer_server_cipher_suites: { type: 'boolean' },
      },
    },
    http_server_config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // Accepted for compatibility; eoswatch serves HTTP/1.1.
        http2: { type: 'boolean' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      properties: {
        burst: { type: 'integer', minimum: 0, maximum: 1_000_000 },
        interval: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$', description: 'a duration such as 100ms or 1s' },
      },
    },
    basic_auth_users: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    auth_excluded_paths: { type: ['array', 'null'], items: { type: 'string', pattern: '^/', description: 'a path starting with /' } },
  },
} as const;

let compiled: ValidateFunction | undefined;
/** The web schema's validator, compiled at the first web configuration read: a daemon without one never loads ajv. */
async function webValidator(): Promise<ValidateFunction> {
  if (!compiled) {
    const { Ajv } = await import('ajv');
    compiled = new Ajv({ allErrors: true, verbose: true, strict: true }).compile(webSchema);
  }
  return compiled;
}

interface RawWebConfig {
  tls_server_config?: Record<string, unknown> & {
    cert_file?: string;
    key_file?: string;
    cert?: string;
    key?: string;
    client_ca_file?: string;
    client_ca?: string;
    client_auth_type?: string;
    client_allowed_sans?: string[];
    min_version?: keyof typeof TLS_VERSIONS;
    max_version?: keyof typeof TLS_VERSIONS;
    cipher_suites?: string[];
    curve_preferences?: string[];
    prefer_server_cipher_suites?: boolean;
  };
  http_server_config?: { http2?: boolean; headers?: Record<string, string> };
  rate_limit?: { burst?: number; interval?: string };
  basic_auth_users?: Record<string, string> | null;
  auth_excluded_paths?: string[] | null;
}

/** Reads, validates and resolves a web configuration file; throws EosError (exit 2) listing every problem. */
export async function loadWebConfig(file: string): Promise<WebConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new EosError(ErrorCodes.CONFIG_NOT_FOUND, `${file}: cannot read web configuration file: ${code === 'ENOENT' ? 'no such file' : code ?? errorMessage(err)}`, { cause: err });
  }
  const { data, doc, lc } = parseYamlText(text, file);
  const raw = (data ?? {}) as RawWebConfig;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: expected a mapping at the top level`);
  const validate = await webValidator();
  if (!validate(raw)) {
    const details = formatSchemaErrors(validate.errors ?? [], file, doc, lc);
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${details.length} web configuration problem${details.length > 1 ? 's' : ''}`, { details });
  }
  const problems: string[] = [];
  const at = (path: (string | number)[], text: string) => problems.push(`${file}${position(doc, lc, path)}: /${path.join('/')}: ${text}`);
  const dir = dirname(resolve(file));

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(raw.basic_auth_users ?? {})) {
    // The hash is not quoted back: a password pasted here by mistake would be.
    if (!BCRYPT.test(hash)) at(['basic_auth_users', user], 'expected a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 60 characters), e.g. from htpasswd -nBC 10 "" | tr -d \':\\n\'');
    users.set(user, hash);
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw.http_server_config?.headers ?? {})) {
    const allowed = HEADERS[name];
    if (allowed === undefined) at(['http_server_config', 'headers', name], `header "${name}" cannot be configured; expected one of: ${Object.keys(HEADERS).join(', ')}`);
    else if (allowed && !allowed.includes(value)) at(['http_server_config', 'headers', name], `found "${value}", expected one of: ${allowed.join(', ')}`);
    else headers[name] = value;
  }

  let rateLimit: WebConfig['rateLimit'];
  if (raw.rate_limit?.interval !== undefined) {
    const intervalMs = parseDuration(raw.rate_limit.interval);
    if (intervalMs > 0) rateLimit = { burst: raw.rate_limit.burst ?? 0, intervalMs };
  }

  const tls = await resolveTls(raw.tls_server_config, dir, at);
  if (problems.length) throw new EosError(ErrorCodes.CONFIG_INVALID, `${file}: ${problems.length} web configuration problem${problems.length > 1 ? 's' : ''}`, { details: problems });
  return {
    file,
    ...(tls ? { tls } : {}),
    users,
    headers,
    ...(rateLimit ? { rateLimit } : {}),
    authExcludedPaths: raw.auth_excluded_paths === undefined ? DEFAULT_AUTH_EXCLUDED_PATHS : (raw.auth_excluded_paths ?? []),
  };
}

/** The secure context of a TLS listener: what server.setSecureContext takes when the certificate is renewed (src/http/web-reload.ts). */
export function secureContextOptions(tls: WebTls): SecureContextOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa ? { ca: tls.clientCa } : {}),
    minVersion: tls.minVersion,
    maxVersion: tls.maxVersion,
    ...(tls.ciphers ? { ciphers: tls.ciphers } : {}),
    ...(tls.ecdhCurve ? { ecdhCurve: tls.ecdhCurve } : {}),
    honorCipherOrder: tls.honorCipherOrder,
  };
}

function position(doc: Document, lc: LineCounter, path: (string | number)[]): string {
  const node = doc.getIn(path, true) as { range?: [number, number] } | undefined;
  const parent = doc.getIn(path.slice(0, -1), true) as { range?: [number, number] } | undefined;
  const range = node?.range ?? parent?.range;
  if (!range) return '';
  const { line, col } = lc.linePos(range[0]);
  return `:${line}:${col}`;
}

async function resolveTls(t: RawWebConfig['tls_server_config'], dir: string, at: (path: string[], text: string) => void): Promise<WebTls | undefined> {
  if (!t) return undefined;
  const enabled = [t.cert_file, t.cert, t.key_file, t.key, t.client_ca_file, t.client_ca, t.client_auth_type].some((v) => v !== undefined && v !== '');
  if (!enabled) return undefined;
  const k = (key: string) => ['tls_server_config', key];
  const read = async (key: 'cert_file' | 'key_file' | 'client_ca_file', path: string): Promise<string | undefined> => {
    try {
      return await readFile(resolve(dir, path), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      at(k(key), `cannot read "${path}": ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code ?? errorMessage(err)}`);
      return undefined;
    }
  };
  const material = async (fileKey: 'cert_file' | 'key_file' | 'client_ca_file', inlineKey: 'cert' | 'key' | 'client_ca'): Promise<{ text?: string; key: string }> => {
    const path = t[fileKey];
    const inline = t[inlineKey];
    if (path && inline) at(k(fileKey), `set either ${fileKey} or ${inlineKey}, not both`);
    if (path) return { text: await read(fileKey, path), key: fileKey };
    return { text: inline || undefined, key: inlineKey };
  };
  const cert = await material('cert_file', 'cert');
  const key = await material('key_file', 'key');
  const ca = await material('client_ca_file', 'client_ca');
  if (!t.cert_file && !t.cert) at(k('cert_file'), 'missing: TLS needs cert_file (or cert)');
  if (!t.key_file && !t.key) at(k('key_file'), 'missing: TLS needs key_file (or key)');
  if (cert.text) {
    try {
      new X509Certificate(cert.text);
    } catch (err) {
      at(k(cert.key), `not a PEM certificate (${errorMessage(err)})`);
      cert.text = undefined;
    }
  }
  if (key.text) {
    try {
      createPrivateKey(key.text);
    } catch {
      // The key text is never quoted.
      at(k(key.key), 'not a PEM private key (or one protected by a passphrase, which the web configuration cannot give)');
      key.text = undefined;
    }
  }
  if (cert.text && key.text) {
    try {
      createSecureContext({ cert: cert.text, key: key.text });
    } catch (err) {
      at(k(key.key), `does not match ${cert.key} (${errorMessage(err)})`);
    }
  }
  if (ca.text) {
    try {
      new X509Certificate(ca.text);
    } catch (err) {
      at(k(ca.key), `not a PEM certificate (${errorMessage(err)})`);
    }
  }
  const clientAuth = CLIENT_AUTH[t.client_auth_type ?? '']!;
  if ((t.client_ca_file || t.client_ca) && clientAuth === 'NoClientCert') at(k('client_auth_type'), 'client CAs are configured without a client_auth_type: expected VerifyClientCertIfGiven or RequireAndVerifyClientCert');
  if ((clientAuth === 'RequireAndVerifyClientCert' || clientAuth === 'VerifyClientCertIfGiven') && !t.client_ca_file && !t.client_ca) at(k('client_ca_file'), `missing: ${clientAuth} verifies client certificates against client_ca_file (or client_ca)`);
  if (t.client_allowed_sans && clientAuth !== 'RequireAnyClientCert' && clientAuth !== 'RequireAndVerifyClientCert') {
    at(k('client_allowed_sans'), 'expected client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert: without a required certificate there is nothing to match');
  }
  const minVersion = TLS_VERSIONS[t.min_version ?? 'TLS12'];
  const maxVersion = TLS_VERSIONS[t.max_version ?? 'TLS13'];
  if (minVersion > maxVersion) at(k('min_version'), `found ${t.min_version}, expected at most max_version (${t.max_version ?? 'TLS13'})`);
  if (!cert.text || !key.text) return undefined;
  return {
    cert: cert.text,
    key: key.text,
    ...(ca.text ? { clientCa: ca.text } : {}),
    clientAuth,
    ...(t.client_allowed_sans ? { clientAllowedSans: t.client_allowed_sans } : {}),
    minVersion,
    maxVersion,
    ...(t.cipher_suites?.length ? { ciphers: [TLS13_CIPHERS, ...t.cipher_suites.map((c) => CIPHERS[c]!)].join(':') } : {}),
    ...(t.curve_preferences?.length ? { ecdhCurve: t.curve_preferences.map((c) => CURVES[c]!).join(':') } : {}),
    honorCipherOrder: t.prefer_server_cipher_suites ?? true,
  };
}
