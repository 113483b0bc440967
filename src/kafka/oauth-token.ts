// SASL/OAUTHBEARER from a token file (kafka.sasl.tokenFile): kafkajs asks its oauthBearerProvider
// for a token at every authentication (every new connection), and the provider reads the file
// again each time, so a token rotated on disk (a sidecar, a Kubernetes projected token) is used by
// the next connection without a restart. The token is a secret: no message here quotes it, only
// the file's path and, for a JWT, its expiry. A JWT whose `exp` has passed is refused before it is
// sent: the broker would refuse it too, less clearly.
import { readFile } from 'node:fs/promises';
import kafkajs from 'kafkajs';

// kafkajs is CommonJS: its error classes are read from the default export (its typings give them no message argument).
const SaslError = kafkajs.KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;

/** The text of a token file: surrounding whitespace (a trailing newline) is not part of the token. Pure. */
export function tokenOf(text: string): string {
  return text.trim();
}

function base64urlJson(part: string): unknown {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(part)) return undefined;
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The expiry (ms since the epoch) of a JWT: its payload's numeric `exp` claim (seconds), or
 * undefined when the token is no JWT (an opaque token) or carries no numeric exp. Pure.
 */
export function jwtExpiryMs(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 && parts.length !== 5) return undefined;
  const payload = base64urlJson(parts[1]!);
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const exp = (payload as { exp?: unknown }).exp;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
}

/** Why a token cannot be used, or undefined when it can (as far as eoswatch can tell). Pure. */
export function tokenProblem(token: string, file: string, now: number): string | undefined {
  // The key name is never followed by the path: redactText would take the path for its secret value.
  if (token === '') return `the token file ${file} (kafka.sasl.tokenFile) is empty; expected the OAuth bearer token`;
  const exp = jwtExpiryMs(token);
  if (exp !== undefined && exp <= now) {
    return `the token in ${file} (kafka.sasl.tokenFile) expired at ${new Date(exp).toISOString()} (its exp claim); write a fresh token there (it is read again at every connection)`;
  }
  return undefined;
}

/** kafkajs' oauthBearerProvider for a token file: read at every call, refused when empty or expired. */
export function tokenFileProvider(file: string, now: () => number = Date.now): () => Promise<{ value: string }> {
  return async () => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new SaslError(`SASL OAUTHBEARER: cannot read the token file ${file} (kafka.sasl.tokenFile): ${code}`);
    }
    const token = tokenOf(text);
    const problem = tokenProblem(token, file, now());
    if (problem) throw new SaslError(`SASL OAUTHBEARER: ${problem}`);
    return { value: token };
  };
}
