// The one redaction path for everything eoswatch prints: CLI reports, /audit, logs and
// configuration errors. Two rules:
// - by key: a value stored under a secret-bearing key (password, sasl.jaas.config, token, ...)
//   is replaced whole, at any depth of an object;
// - by shape, in free text: the value after a secret key written as `key=value`, `key: value`,
//   `"key":"value"` (or `key value` for a dotted property name), JAAS options, bearer tokens, JWTs, the
//   userinfo of URLs and PEM private keys. Free text is where a secret ends up by accident: a
//   stray `\` continuation in a .properties file glues `sasl.jaas.config=...` onto the value of
//   the key above it, and that value is then quoted in a finding.
// An unquoted value is cut to the end of the text, not to the next space: where a secret got
// glued into another value nothing says where it ends, and a redacted remainder is a small price.

export const REDACTED = '[REDACTED]';

/** Words that make a key secret wherever they stand in it (split at . _ - and camelCase). */
const SECRET_WORDS = new Set(['password', 'passwd', 'pwd', 'pw', 'passphrase', 'secret', 'secrets', 'token', 'tokens', 'credential', 'credentials', 'authorization', 'jaas', 'apikey', 'privatekey']);
/** Whole keys (pino's ssl option names: PEM material). */
const SECRET_KEYS = new Set(['key', 'cert', 'ca', 'pfx', 'auth', 'cookie', 'set-cookie']);
/** Last word `key` after one of these: ssl.key, ssl.keystore.key, private.key, api.key. */
const KEY_QUALIFIERS = new Set(['ssl', 'keystore', 'private', 'api', 'access', 'signing', 'client', 'secret', 'encryption']);
/** Multi-word names that carry a secret without a secret word in them. */
const SECRET_PHRASES = [/^(basic\.auth\.)?user\.info$/i, /(^|\.)basic\.auth\.user\.info$/i, /^userinfo$/i];

function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s._\-/]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** Answers for keys seen before: logs ask about the same few keys over and over. */
const secretKeyCache = new Map<string, boolean>();

/** Whether a value stored under this key is a secret (sasl.jaas.config, ssl.key.password, apiToken, ...). */
export function isSecretKey(key: string): boolean {
  let known = secretKeyCache.get(key);
  if (known === undefined) {
    known = judgeKey(key);
    if (secretKeyCache.size >= 4096) secretKeyCache.clear();
    secretKeyCache.set(key, known);
  }
  return known;
}

function judgeKey(key: string): boolean {
  const k = key.trim();
  if (!k) return false;
  if (SECRET_KEYS.has(k.toLowerCase())) return true;
  if (SECRET_PHRASES.some((p) => p.test(k))) return true;
  const w = words(k);
  if (w.some((x) => SECRET_WORDS.has(x))) return true;
  const last = w.length - 1;
  return last > 0 && w[last] === 'key' && w.slice(0, last).some((x) => KEY_QUALIFIERS.has(x));
}

/** End (exclusive) of a quoted value starting at `start` (the quote), honouring backslash escapes; the text's end when unclosed. */
function quotedEnd(text: string, start: number): number {
  const q = text[start]!;
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === q) return i + 1;
  }
  return text.length;
}

// A key name, optionally quoted, then a separator. Whitespace alone separates only dotted
// property names (`ssl.key.password secret`, as .properties allows), not words of prose.
// Each pattern starts only where a run of its characters starts and is bounded in length, so that
// a long token (a base64 blob in a log line) costs linear time, not quadratic.
const KEY_THEN_SEP = /(?<![A-Za-z0-9_.-])(\\?["']?)([A-Za-z_][A-Za-z0-9_.-]{0,127})\1(\s*[=:]\s*|[ \t\f]+)/g;
const BEARER = /(?<!Delegation )\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9\-._~+/]{8,}=*)/g;
/**
 * kafkajs names a request by its API key and version, `Produce(key: 0, version: 7)`: an API key
 * is a protocol number, not a secret key. Only that exact shape is left alone (an opening
 * parenthesis, `key: `, a number, `, version: `, a number, `)`), so `key: <anything else>` stays secret.
 */
const API_KEY_AT = /\(key: \d{1,5}, version: \d{1,5}\)/y;

function isApiKeyInfo(text: string, keyStart: number): boolean {
  API_KEY_AT.lastIndex = keyStart - 1;
  return keyStart > 0 && API_KEY_AT.test(text);
}
const URL_USERINFO = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/)([^\s/?#]{0,512})@/g;
/** A JWT (a JWS or JWE, signed or not): a base64url JSON header (`{"` is `eyJ`), a payload, the rest. */
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_.-]*/g;
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;

/** Free text with every secret it carries replaced by [REDACTED]. Idempotent. */
export function redactText(text: string): string {
  let out = text.replace(PRIVATE_KEY, REDACTED).replace(JWT, REDACTED);
  out = out.replace(URL_USERINFO, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return `${scheme}${colon >= 0 ? `${userinfo.slice(0, colon)}:${REDACTED}` : REDACTED}@`;
  });
  out = out.replace(BEARER, (m, scheme: string, space: string, token: string) => (token === REDACTED ? m : `${scheme}${space}${REDACTED}`));
  // Key-then-value, left to right; a redacted value is skipped, so nothing inside it is rescanned.
  let result = '';
  let pos = 0;
  KEY_THEN_SEP.lastIndex = 0;
  for (let m = KEY_THEN_SEP.exec(out); m; m = KEY_THEN_SEP.exec(out)) {
    const [whole, , key, sep] = m as unknown as [string, string, string, string];
    const whitespaceOnly = !/[=:]/.test(sep);
    if (!isSecretKey(key) || (whitespaceOnly && !key.includes('.')) || (key === 'key' && isApiKeyInfo(out, m.index))) {
      // Rescan from the separator: the next key may start right after it.
      KEY_THEN_SEP.lastIndex = m.index + whole.length - sep.length + (sep.length ? 1 : 0);
      continue;
    }
    const valueStart = m.index + whole.length;
    if (out.startsWith(REDACTED, valueStart)) {
      KEY_THEN_SEP.lastIndex = valueStart + REDACTED.length;
      continue;
    }
    const q = out[valueStart];
    if (q === '"' || q === "'") {
      const end = quotedEnd(out, valueStart);
      if (out.slice(valueStart + 1, end - 1) === REDACTED) {
        KEY_THEN_SEP.lastIndex = end;
        continue;
      }
      result += `${out.slice(pos, valueStart)}${q}${REDACTED}${q}`;
      pos = end;
      KEY_THEN_SEP.lastIndex = end;
      if (end === out.length) break;
    } else {
      if (valueStart >= out.length) continue;
      result += `${out.slice(pos, valueStart)}${REDACTED}`;
      pos = out.length;
      break;
    }
  }
  return result + out.slice(pos);
}

/**
 * A copy of a value fit to print: strings through redactText, values under secret keys replaced
 * whole, Errors as {name, message, stack} likewise, at any depth. Cycles are cut.
 */
export function redactValue(value: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (value instanceof Error) {
    const e = value as Error & { code?: unknown; details?: unknown; cause?: unknown };
    const out: Record<string, unknown> = { type: e.name, message: redactText(e.message) };
    if (e.stack) out.stack = redactText(e.stack);
    if (e.code !== undefined) out.code = redactValue(e.code, seen);
    if (e.details !== undefined) out.details = redactValue(e.details, seen);
    if (e.cause !== undefined) out.cause = redactValue(e.cause, seen);
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, seen));
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), isSecretKey(String(k)) ? REDACTED : redactValue(v, seen)]));
  if (ArrayBuffer.isView(value)) return REDACTED;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null && v !== '' ? REDACTED : redactValue(v, seen);
  }
  return out;
}
