// SASL/OAUTHBEARER from kafka.sasl.tokenFile (src/kafka/oauth-token.ts, src/kafka/client.ts): the
// file read at every authentication, a JWT's expiry judged before it is sent, no error quoting the
// token, and the configuration that asks for it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtExpiryMs, tokenFileProvider, tokenOf, tokenProblem } from '../../../src/kafka/oauth-token.js';
import { saslOptions } from '../../../src/kafka/client.js';
import { parseConfigText } from '../../../src/config/load.js';
import { redactText } from '../../../src/redact.js';
import { selfSignedCertificate } from '../../harness/tls.js';

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = (payload: unknown, sig = ''): string => `${b64({ alg: 'none' })}.${b64(payload)}.${sig}`;

describe('jwtExpiryMs', () => {
  test('the exp claim in ms, signed or not', () => {
    assert.equal(jwtExpiryMs(jwt({ sub: 'a', exp: 1700000000 })), 1700000000000);
    assert.equal(jwtExpiryMs(jwt({ sub: 'a', exp: 1.5 }, 'c2ln')), 1500);
    assert.equal(jwtExpiryMs(`${b64({ alg: 'RSA-OAEP' })}.${b64({ exp: 2 })}.iv.ct.tag`), 2000, 'five parts (JWE compact)');
  });
  test('undefined for what is no JWT or has no numeric exp', () => {
    for (const t of ['opaque-token-1234', 'a.b', 'a.b.c.d', `x.${b64({ exp: 1 })}.y.z`, jwt({ sub: 'a' }), jwt({ exp: '1700000000' }), jwt([1]), jwt(null), `h.${Buffer.from('not json').toString('base64url')}.s`, 'h.p+q.s', jwt({ exp: null })]) {
      assert.equal(jwtExpiryMs(t), undefined, t);
    }
    assert.equal(jwtExpiryMs(`h.${Buffer.from('{"exp":1e400}').toString('base64url')}.s`), undefined, 'not finite');
  });
});

describe('tokenProblem', () => {
  const now = 1_800_000_000_000;
  test('an empty token', () => {
    assert.equal(tokenProblem('', '/t/tok', now), 'the token file /t/tok (kafka.sasl.tokenFile) is empty; expected the OAuth bearer token');
  });
  test('an expired JWT, at and past exp; never the token in the message', () => {
    const t = jwt({ sub: 'app', exp: now / 1000 });
    const m = tokenProblem(t, '/t/tok', now)!;
    assert.equal(m, 'the token in /t/tok (kafka.sasl.tokenFile) expired at 2027-01-15T08:00:00.000Z (its exp claim); write a fresh token there (it is read again at every connection)');
    assert.ok(!m.includes(t));
    assert.equal(redactText(m), m, 'the message survives redaction whole: the path is not taken for a secret');
    assert.ok(tokenProblem(jwt({ exp: now / 1000 - 1 }), 'f', now));
  });
  test('fine: a JWT not yet expired, an opaque token, a JWT without exp', () => {
    assert.equal(tokenProblem(jwt({ exp: now / 1000 + 1 }), 'f', now), undefined);
    assert.equal(tokenProblem('opaque', 'f', now), undefined);
    assert.equal(tokenProblem(jwt({ sub: 'x' }), 'f', now), undefined);
  });
  test('tokenOf trims the file', () => {
    assert.equal(tokenOf('  abc.def.\n'), 'abc.def.');
    assert.equal(tokenOf('\n'), '');
  });
});

describe('tokenFileProvider', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'eoswatch-oauth-'));
  after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  const now = 1_800_000_000_000;

  test('reads the file at every call: a rotated token is the next one sent', async () => {
    const provide = tokenFileProvider(file, () => now);
    const first = jwt({ sub: 'app', exp: now / 1000 + 60 });
    await writeFile(file, `${first}\n`);
    assert.deepEqual(await provide(), { value: first });
    const second = jwt({ sub: 'app', exp: now / 1000 + 120 });
    await writeFile(file, second);
    assert.deepEqual(await provide(), { value: second });
  });

  test('an expired, empty or missing file: a SASL authentication error naming the file, not the token', async () => {
    const provide = tokenFileProvider(file, () => now);
    const old = jwt({ sub: 'app', exp: now / 1000 - 60 });
    await writeFile(file, old);
    const err = await provide().then(() => undefined, (e: Error & { retriable?: boolean }) => e);
    assert.ok(err);
    assert.equal(err.name, 'KafkaJSSASLAuthenticationError');
    assert.equal(err.retriable, false, 'kafkajs does not retry it within the request');
    assert.match(err.message, /^SASL OAUTHBEARER: the token in .*token \(kafka\.sasl\.tokenFile\) expired at 2027-01-15T07:59:00\.000Z/);
    assert.ok(!err.message.includes(old));
    await writeFile(file, '  \n');
    await assert.rejects(provide(), /SASL OAUTHBEARER: the token file .* is empty/);
    await assert.rejects(tokenFileProvider(join(dir, 'absent'))(), (e: Error) => e.message === `SASL OAUTHBEARER: cannot read the token file ${join(dir, 'absent')} (kafka.sasl.tokenFile): ENOENT`);
  });
});

describe('kafka.sasl oauthbearer in the configuration', () => {
  test('mechanism oauthbearer with tokenFile: kafkajs gets an oauthBearerProvider, no user or password', () => {
    const cfg = parseConfigText('kafka:\n  sasl: {mechanism: oauthbearer, tokenFile: /run/secrets/kafka-token}\n', 'x.yaml', {});
    assert.deepEqual(cfg.kafka.sasl, { mechanism: 'oauthbearer', tokenFile: '/run/secrets/kafka-token' });
    const s = saslOptions(cfg.kafka) as { mechanism: string; oauthBearerProvider?: unknown; username?: unknown };
    assert.equal(s.mechanism, 'oauthbearer');
    assert.equal(typeof s.oauthBearerProvider, 'function');
    assert.equal(s.username, undefined);
  });
  test('the password mechanisms unchanged', () => {
    const cfg = parseConfigText('kafka:\n  sasl: {mechanism: plain, username: u, password: p}\n', 'x.yaml', {});
    assert.deepEqual(saslOptions(cfg.kafka), { mechanism: 'plain', username: 'u', password: 'p' });
  });
  test('oauthbearer without tokenFile, and a password mechanism without a password, are refused', () => {
    const problems = (text: string): string[] => {
      try {
        parseConfigText(text, 'x.yaml', {});
      } catch (err) {
        return (err as { details: string[] }).details;
      }
      return [];
    };
    assert.deepEqual(problems('kafka:\n  sasl: {mechanism: oauthbearer}\n'), ['x.yaml:2:9: /kafka/sasl/tokenFile: missing required key "tokenFile"']);
    const both = problems('kafka:\n  sasl: {mechanism: scram-sha-512, tokenFile: /t}\n');
    assert.equal(both.length, 2, both.join('\n'));
    assert.match(both[0]!, /missing required key "username"/);
    assert.match(both[1]!, /missing required key "password"/);
  });
});

describe('certificateProblem (kafka.ssl.certFile past its validity)', async () => {
  const { certificateProblem } = await import('../../../src/kafka/client.js');
  // A self-signed certificate made in this process (test/harness/tls.ts), valid from now for
  // `days` days, as openssl x509 -days makes one: -1 is valid from now until a day ago, expired.
  const make = async (name: string, days: string): Promise<string> => {
    const from = Date.now();
    return selfSignedCertificate(name, from, from + Number(days) * 86_400_000);
  };

  test('expired: the file and when, never the certificate', async () => {
    const pem = await make('old', '-1');
    const now = Date.now();
    const m = certificateProblem(pem, '/etc/eoswatch/client.crt', now);
    assert.match(m ?? '', /^the client certificate \/etc\/eoswatch\/client\.crt \(kafka\.ssl\.certFile\) expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z: brokers that require client certificates refuse the connection; renew it$/);
    assert.equal(redactText(m!), m, 'the path survives redaction');
  });
  test('valid now: nothing; judged at the given time: not yet valid, expired', async () => {
    const pem = await make('fresh', '30');
    const now = Date.now();
    assert.equal(certificateProblem(pem, 'c.crt', now), undefined);
    assert.match(certificateProblem(pem, 'c.crt', now - 86_400_000) ?? '', /^the client certificate c\.crt \(kafka\.ssl\.certFile\) is not valid before .*until then$/);
    assert.match(certificateProblem(pem, 'c.crt', now + 31 * 86_400_000) ?? '', /expired at/);
  });
  test('not a certificate: nothing to say (TLS reports it)', () => {
    assert.equal(certificateProblem('not a pem', 'c.crt', Date.now()), undefined);
  });
});
