// The redaction rules of src/redact.ts one by one, on fixed inputs: which keys are secret, each
// shape a secret takes in free text, and values at any depth. Fast and exact; the property-based
// test/unit/secrets.test.ts drives random secrets through every output instead.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretKey, redactText, redactValue, REDACTED } from '../../src/redact.js';
import { kafkajsSourceTexts, RECORDED_KAFKAJS_TEXTS } from '../harness/kafkajs-texts.js';

const R = REDACTED;

describe('isSecretKey', () => {
  test('secret words anywhere in the key, split at . _ - / and camelCase', () => {
    for (const k of ['password', 'ssl.key.password', 'sasl.jaas.config', 'apiToken', 'API_TOKEN', 'my-secret-thing', 'db/passwd', 'pwd', 'pw',
      'passphrase', 'secrets', 'tokens', 'aws.credential', 'credentials', 'Authorization', 'apikey', 'privatekey', 'user pw']) {
      assert.equal(isSecretKey(k), true, k);
    }
  });

  test('whole keys (PEM material and headers), case-insensitive, trimmed', () => {
    for (const k of ['key', 'KEY', ' cert ', 'ca', 'pfx', 'auth', 'cookie', 'set-cookie']) assert.equal(isSecretKey(k), true, k);
  });

  test('a last word `key` is secret only after a qualifier', () => {
    for (const k of ['ssl.key', 'ssl.keystore.key', 'private.key', 'api.key', 'access.key', 'signing.key', 'client.key', 'secret.key', 'encryption.key', 'privateKey']) {
      assert.equal(isSecretKey(k), true, k);
    }
    for (const k of ['message.key', 'partition.key', 'key.serializer', 'ssl.key.location', 'keystore', 'ssl.keystore.type']) assert.equal(isSecretKey(k), false, k);
  });

  test('user info phrases', () => {
    for (const k of ['user.info', 'basic.auth.user.info', 'schema.registry.basic.auth.user.info', 'userinfo', 'UserInfo']) assert.equal(isSecretKey(k), true, k);
    assert.equal(isSecretKey('user.infos'), false);
    assert.equal(isSecretKey('x.user.info'), false);
    assert.equal(isSecretKey('userinfo.size'), false);
  });

  test('ordinary keys, empty and blank keys are not secret; answers are stable when asked again', () => {
    for (const k of ['', '   ', 'bootstrap.servers', 'acks', 'transactional.id', 'keyword', 'passwords.count.max', 'cacert.path', 'author']) {
      assert.equal(isSecretKey(k), false, JSON.stringify(k));
      assert.equal(isSecretKey(k), false, JSON.stringify(k));
    }
    assert.equal(isSecretKey('ssl.truststore.password'), true);
    assert.equal(isSecretKey('ssl.truststore.password'), true);
  });

  test('the answer cache is bounded and forgets nothing it must know', () => {
    for (let i = 0; i < 5000; i++) assert.equal(isSecretKey(`plain.key.number${i}`), false);
    assert.equal(isSecretKey('sasl.jaas.config'), true);
    assert.equal(isSecretKey('plain.key.number1'), false);
  });
});

describe('redactText', () => {
  test('key=value and key: value, to the end of the text', () => {
    assert.equal(redactText('password=hunter2 and more'), `password=${R}`);
    assert.equal(redactText('ssl.key.password: hunter2'), `ssl.key.password: ${R}`);
    assert.equal(redactText('acks=all password = s3cret'), `acks=all password = ${R}`);
    assert.equal(redactText('acks=all'), 'acks=all');
    assert.equal(redactText('no secrets here'), 'no secrets here');
  });

  test('quoted keys and values: only the quoted value goes, the text after it stays', () => {
    assert.equal(redactText('{"password":"hunter2","acks":"all"}'), `{"password":"${R}","acks":"all"}`);
    assert.equal(redactText("token='abc def' next=1"), `token='${R}' next=1`);
    // Escaped quotes (JSON inside a string): the value runs to the end.
    assert.equal(redactText('{\\"password\\":\\"x\\"}'), `{\\"password\\":${R}`);
    assert.equal(redactText('password="a\\"b" tail'), `password="${R}" tail`);
    assert.equal(redactText('password="unclosed'), `password="${R}"`);
    // Two quoted secrets, both redacted.
    assert.equal(redactText('token="a" secret="b"'), `token="${R}" secret="${R}"`);
  });

  test('whitespace alone separates only dotted property names', () => {
    assert.equal(redactText('ssl.key.password hunter2'), `ssl.key.password ${R}`);
    assert.equal(redactText('the password is short'), 'the password is short');
    assert.equal(redactText('a token was refused'), 'a token was refused');
  });

  test('a secret glued onto another value by a stray continuation', () => {
    // The glued key does not start a key (it follows a digit), but the JAAS option inside still does.
    assert.equal(
      redactText('bootstrap.servers=a:9092sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'),
      `bootstrap.servers=a:9092sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${R}";`,
    );
    assert.equal(redactText('bootstrap.servers=a:9092 sasl.jaas.config=x required password="p";'), `bootstrap.servers=a:9092 sasl.jaas.config=${R}`);
    assert.equal(redactText('x=1 y=2 token=t'), `x=1 y=2 token=${R}`);
  });

  test('a key as part of a longer word is not that key', () => {
    assert.equal(redactText('mypassword=visible'), 'mypassword=visible');
    assert.equal(redactText('my_password=hidden'), `my_password=${R}`);
    assert.equal(redactText('keyword=visible'), 'keyword=visible');
  });

  test('bearer, basic and token schemes', () => {
    assert.equal(redactText('Authorization header Bearer abcdefgh12345678 sent'), `Authorization header Bearer ${R} sent`);
    assert.equal(redactText('got Basic dXNlcjpwYXNzd29yZA== back'), `got Basic ${R} back`);
    assert.equal(redactText('Token abcdefgh.ijk'), `Token ${R}`);
    assert.equal(redactText('Bearer short'), 'Bearer short');
  });

  test('JWTs wherever they stand: signed, unsigned (empty signature), JWE; not JSON-free dotted words', () => {
    const h = Buffer.from('{"alg":"none"}').toString('base64url');
    const p = Buffer.from('{"sub":"app","exp":1}').toString('base64url');
    assert.equal(redactText(`token ${h}.${p}. refused`), `token ${R} refused`);
    assert.equal(redactText(`x=${h}.${p}.c2lnbmF0dXJl;`), `x=${R};`);
    assert.equal(redactText(`jwe ${h}.${p}.aXY.Y2lwaGVy.dGFn end`), `jwe ${R} end`);
    assert.equal(redactText(`(${h}.${p}.sig)`), `(${R})`);
    assert.equal(redactText(`${h}.${p}`), `${h}.${p}`, 'two parts are no JWT');
    assert.equal(redactText(`${h}.abc.def`), `${h}.abc.def`, 'a payload of 3 characters is no JWT');
    assert.equal(redactText(`${h}.abcd.`), R, 'a payload of 4 is');
    assert.equal(redactText('see eyJ.abcd.ef'), 'see eyJ.abcd.ef', 'a header of 3 characters is no JWT');
    assert.equal(redactText(`xeyJabcd.${p}.s`), `xeyJabcd.${p}.s`, 'not inside a word');
    assert.equal(redactText('org.apache.kafka.common.Config'), 'org.apache.kafka.common.Config');
  });

  test('URL userinfo: the password, or the whole userinfo without a colon', () => {
    assert.equal(redactText('see https://alice:pa55@host:8081/x'), `see https://alice:${R}@host:8081/x`);
    assert.equal(redactText('sasl+ssl://tok3n@broker'), `sasl+ssl://${R}@broker`);
    assert.equal(redactText('https://host/path@x'), 'https://host/path@x');
    assert.equal(redactText('mailto alice@example.org'), 'mailto alice@example.org');
  });

  test('PEM private keys, closed or cut off', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----';
    assert.equal(redactText(`before ${pem} after`), `before ${R} after`);
    assert.equal(redactText('x -----BEGIN PRIVATE KEY-----\nMIIE'), `x ${R}`);
    assert.equal(redactText('-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----'), '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----');
  });

  test('idempotent: redacted text is left as it is', () => {
    for (const t of ['password=hunter2', '{"password":"x","a":1}', 'ssl.key.password hunter2', 'Bearer abcdefgh12345678', 'https://a:b@h', 'token=\'x\' y=1']) {
      const once = redactText(t);
      assert.equal(redactText(once), once, t);
    }
    assert.equal(redactText(`password=${R} token=abc`), `password=${R} token=${R}`);
    assert.equal(redactText(`password="${R}" token="abc"`), `password="${R}" token="${R}"`);
  });

  test('a secret key with nothing after it, or at the very end', () => {
    assert.equal(redactText('password='), 'password=');
    assert.equal(redactText('password'), 'password');
    assert.equal(redactText('password=""'), `password="${R}"`);
  });
});

describe('redaction edges', () => {
  test('keys: a qualifier alone before key, a phrase only as the whole key or its end, any qualifier before key', () => {
    assert.equal(isSecretKey('keystore.key'), true);
    assert.equal(isSecretKey('ssl.message.key'), true);
    assert.equal(isSecretKey('x.basic.auth.user.info.size'), false);
    assert.equal(isSecretKey('myuserinfo'), false);
  });

  test('text: runs of blanks after a dotted key or a scheme, one-letter URL schemes, an empty user name', () => {
    assert.equal(redactText('ssl.key.password   hunter2'), `ssl.key.password   ${R}`);
    assert.equal(redactText('Bearer  abcdefgh12345678'), `Bearer  ${R}`);
    assert.equal(redactText('x://user:pw@h'), `x://user:${R}@h`);
    assert.equal(redactText('at x://user:pw@h'), `at x://user:${R}@h`);
    assert.equal(redactText('https://:pw@h'), `https://:${R}@h`);
  });
});

describe('redactValue', () => {
  test('secret keys are replaced whole at any depth; empty values are left to show they are empty', () => {
    const v = { a: 1, password: 'x', nested: { sasl: { 'sasl.jaas.config': 'j' }, list: [{ token: 't' }, 'password=p'] }, secret: '', apiKey: null, pw: undefined };
    assert.deepEqual(redactValue(v), { a: 1, password: R, nested: { sasl: { 'sasl.jaas.config': R }, list: [{ token: R }, `password=${R}`] }, secret: '', apiKey: null, pw: undefined });
    assert.deepEqual(redactValue({ password: 0 }), { password: R });
  });

  test('strings go through redactText; other scalars as they are', () => {
    assert.equal(redactValue('token=abc'), `token=${R}`);
    assert.equal(redactValue(5), 5);
    assert.equal(redactValue(null), null);
    assert.equal(redactValue(undefined), undefined);
    assert.equal(redactValue(true), true);
  });

  test('Maps by key, byte buffers whole, cycles cut', () => {
    assert.deepEqual(redactValue(new Map<unknown, unknown>([['password', 'x'], ['acks', 'all'], [1, 'token=t']])), { password: R, acks: 'all', 1: `token=${R}` });
    assert.equal(redactValue(Buffer.from('secret bytes')), R);
    assert.equal(redactValue(new Uint8Array([1, 2])), R);
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    assert.deepEqual(redactValue(a), { name: 'a', self: '[Circular]' });
    // The same object twice (not a cycle) is cut as well: seen is per call.
    const shared = { x: 1 };
    assert.deepEqual(redactValue([shared, shared]), [{ x: 1 }, '[Circular]']);
  });

  test('Errors as {type, message, stack, code, details, cause}, each redacted', () => {
    const cause = new Error('inner token=abc');
    const e = Object.assign(new Error('outer password=p'), { code: 'E_X', details: { secret: 's', ok: 1 }, cause });
    const out = redactValue(e) as Record<string, unknown>;
    assert.equal(out.type, 'Error');
    assert.equal(out.message, `outer password=${R}`);
    assert.match(out.stack as string, new RegExp(`^Error: outer password=\\[REDACTED\\]`));
    assert.doesNotMatch(out.stack as string, /password=p/);
    assert.equal(out.code, 'E_X');
    assert.deepEqual(out.details, { secret: R, ok: 1 });
    assert.equal((out.cause as Record<string, unknown>).message, `inner token=${R}`);
    const bare = new TypeError('plain');
    bare.stack = '';
    assert.deepEqual(redactValue(bare), { type: 'TypeError', message: 'plain' });
  });
});

describe("kafkajs' own texts pass unchanged", () => {
  test('every message literal of kafkajs, its protocol error table and its request names, byte for byte', () => {
    const texts = kafkajsSourceTexts();
    assert.ok(texts.length > 300, `only ${texts.length} texts found in kafkajs' source`);
    const changed = texts.filter((t) => redactText(t) !== t).map((t) => `${JSON.stringify(t)} -> ${JSON.stringify(redactText(t))}`);
    assert.deepEqual(changed, []);
  });

  test('texts recorded from a real cluster, byte for byte, also as an error field and inside an Error', () => {
    for (const t of RECORDED_KAFKAJS_TEXTS) {
      assert.equal(redactText(t), t);
      assert.deepEqual(redactValue({ namespace: 'Connection', broker: '127.0.0.1:39093', clientId: 'eoswatch', topic: 'orders.events', error: t, code: 51 }), {
        namespace: 'Connection', broker: '127.0.0.1:39093', clientId: 'eoswatch', topic: 'orders.events', error: t, code: 51,
      });
      assert.equal((redactValue(new Error(t)) as { message: string }).message, t);
    }
  });

  test('an API key and version is not a secret key; any other value after `key:` still is', () => {
    assert.equal(redactText('Request Produce(key: 0, version: 7) timed out'), 'Request Produce(key: 0, version: 7) timed out');
    assert.equal(redactText('Produce(key: 0, version: 7) password=hunter2'), `Produce(key: 0, version: 7) password=${R}`);
    assert.equal(redactText('Produce(key: 0, version: 7) key: s3cr3t'), `Produce(key: 0, version: 7) key: ${R}`);
    assert.equal(redactText('(key: s3cr3t, version: 7)'), `(key: ${R}`);
    assert.equal(redactText('key: 0, version: 7)'), `key: ${R}`, 'without the opening parenthesis it is not kafkajs\' shape');
    assert.equal(redactText('(key: 0, version: 7'), `(key: ${R}`, 'nor without the closing one');
    assert.equal(redactText('(key: 123456, version: 7)'), `(key: ${R}`, 'API keys are small numbers');
    assert.equal(redactText('(key=0, version: 7)'), `(key=${R}`);
    assert.equal(redactText('Delegation Token authorization failed'), 'Delegation Token authorization failed');
    assert.equal(redactText('Token abcdefghijk'), `Token ${R}`);
  });
});
