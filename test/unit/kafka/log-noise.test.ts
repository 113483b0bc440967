import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { logLevel } from 'kafkajs';
import { kafkaLogCreator } from '../../../src/kafka/client.js';
import { classifyAuthenticationError, classifyConnectionError, classifyKafkaNoise, isDeniedResponse, ConnectionNoise, isRetriableKafkaError, SettlingNoise } from '../../../src/kafka/log-noise.js';
import { createLogger } from '../../../src/log.js';

const CONCURRENT = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
const LOADING = "The coordinator is loading and hence can't process requests for this group";

function capture(level: 'info' | 'debug' = 'info') {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger(level, sink) };
}

describe('kafkajs log noise', () => {
  test('classifies by message or error field; other errors are not noise', () => {
    assert.deepEqual(classifyKafkaNoise(`Failed to send messages: ${CONCURRENT}`, undefined), { kind: 'concurrent-transactions' });
    assert.deepEqual(classifyKafkaNoise('Response AddPartitionsToTxn(key: 24, version: 1)', CONCURRENT), { kind: 'concurrent-transactions' });
    assert.deepEqual(classifyKafkaNoise('Response InitProducerId(key: 22, version: 1)', LOADING), { kind: 'settling', what: 'coordinator loading' });
    assert.equal(classifyKafkaNoise('Failed to send messages: Messages are rejected since there are fewer in-sync replicas than required', undefined), undefined);
    assert.equal(classifyKafkaNoise('Response Produce', 'The producer has been fenced'), undefined);
  });

  test('a healthy pipeline logs no error: concurrent-transaction retries are debug, real errors stay error', () => {
    const { lines, logger } = capture('info');
    let now = 0;
    const log = kafkaLogCreator(logger, () => now)!(logLevel.ERROR);
    for (let i = 0; i < 100; i++) {
      now += 300;
      log({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: `Failed to send messages: ${CONCURRENT}`, retryCount: 0 } });
      log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Response AddPartitionsToTxn(key: 24, version: 1)', error: CONCURRENT } });
    }
    assert.equal(lines.length, 0, 'concurrent-transaction retries are not logged at info or above, however long they go on');
    log({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Failed to send messages: The producer has been fenced' } });
    assert.deepEqual(lines.map((l) => l.level), ['error']);
  });

  test('settling errors: debug while transient, summarised at warn when they persist, never dropped', () => {
    const { lines, logger } = capture('debug');
    let now = 1_000_000;
    const log = kafkaLogCreator(logger, () => now)!(logLevel.ERROR);
    const entry = () => log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Response InitProducerId', error: LOADING } });
    // 20 s of errors: transient, debug only.
    for (let t = 0; t < 20; t++, now += 1000) entry();
    assert.equal(lines.filter((l) => l.level !== 'debug').length, 0);
    assert.equal(lines.length, 20, 'each one is still logged at debug');
    // Persisting past 30 s: one warn summary, then at most one a minute.
    for (let t = 0; t < 100; t++, now += 1000) entry();
    const warns = lines.filter((l) => l.level === 'warn');
    assert.equal(warns.length, 2, `one summary at 30 s, one at 90 s (got ${warns.length})`);
    assert.match(warns[0]!.msg, /not settled for 30 s: 31 retriable/);
    assert.deepEqual(warns[0]!.errors, { 'coordinator loading': 31 });
    assert.deepEqual(warns[1]!.errors, { 'coordinator loading': 60 });
  });

  test('a gap longer than the summary interval starts a new streak', () => {
    const s = new SettlingNoise(30_000, 60_000);
    assert.equal(s.record('x', 0), undefined);
    assert.equal(s.record('x', 29_000), undefined);
    assert.equal(s.record('x', 29_000 + 61_000), undefined, 'new streak after a quiet minute');
    assert.ok(s.record('x', 29_000 + 61_000 + 30_000));
  });

  test('connection errors: classified by message or error field, with the broker their text names', () => {
    assert.deepEqual(classifyConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:39093', undefined), { what: 'ECONNREFUSED', broker: '127.0.0.1:39093' });
    assert.deepEqual(classifyConnectionError('Failed to send messages: Connection error: connect ECONNREFUSED 10.0.0.2:9092', undefined), { what: 'ECONNREFUSED', broker: '10.0.0.2:9092' });
    assert.deepEqual(classifyConnectionError('Connection error: read ECONNRESET', undefined), { what: 'ECONNRESET' });
    assert.deepEqual(classifyConnectionError('Connection timeout', undefined), { what: 'connection timeout' });
    assert.deepEqual(classifyConnectionError('Failed to send messages: Closed connection', undefined), { what: 'closed connection' });
    assert.deepEqual(classifyConnectionError('Response Produce(key: 0, version: 7)', 'Connection closed by the server'), { what: 'closed connection' });
    assert.deepEqual(classifyConnectionError('Request Produce(key: 0, version: 7) timed out', undefined), { what: 'request timeout' });
    assert.deepEqual(classifyConnectionError('Connection error: getaddrinfo ENOTFOUND kafka-2.example', undefined), { what: 'ENOTFOUND' });
    assert.equal(classifyConnectionError('Failed to send messages: The producer has been fenced', undefined), undefined);
    assert.equal(classifyConnectionError('The request timed out', undefined), undefined, 'a protocol REQUEST_TIMED_OUT is retriable, not a connection error');
  });

  test('retriable: kafkajs-retriable protocol errors, coordinator and leader moves, connection errors; fencing and auth are not', () => {
    for (const m of [
      'This is not the correct coordinator for this group', "The coordinator is loading and hence can't process requests for this group", 'The group coordinator is not available',
      'This server is not the leader for that topic-partition', 'There is no leader for this topic-partition as we are in the middle of a leadership election',
      'The request timed out', CONCURRENT, 'Messages are rejected since there are fewer in-sync replicas than required', 'This server does not host this topic-partition',
    ]) {
      assert.equal(isRetriableKafkaError(`Failed to send messages: ${m}`, undefined), true, m);
      assert.equal(isRetriableKafkaError('Response FindCoordinator(key: 10, version: 2)', m), true, m);
    }
    assert.equal(isRetriableKafkaError('Connection error: connect ECONNREFUSED 127.0.0.1:1', undefined), true);
    for (const m of ['The producer has been fenced', 'Not authorized to access topics: [Topic authorization failed.]', 'SASL PLAIN authentication failed: Authentication failed']) {
      assert.equal(isRetriableKafkaError(m, undefined), false, m);
    }
  });

  test('refused SASL authentications: every mechanism kafkajs names, in the message or the error field; not retriable', () => {
    const auth = { what: 'authentication failed' };
    assert.deepEqual(classifyAuthenticationError('SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512', undefined), auth);
    assert.deepEqual(classifyAuthenticationError('SASL PLAIN authentication failed: x', undefined), auth);
    assert.deepEqual(classifyAuthenticationError('SASL OAUTHBEARER: the token in /t (kafka.sasl.tokenFile) expired at 2020-01-01T00:00:00.000Z', undefined), auth);
    assert.deepEqual(classifyAuthenticationError('Failed to connect', 'SASL OAUTHBEARER authentication failed: x'), auth, 'the error field');
    assert.deepEqual(classifyAuthenticationError('Response SaslAuthenticate(key: 36, version: 1)', 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512'), auth);
    assert.equal(classifyAuthenticationError('Response SaslHandshake(key: 17, version: 1)', 'Unsupported SASL mechanism'), undefined);
    assert.equal(classifyAuthenticationError('sasl plain authentication failed', undefined), undefined, 'kafkajs writes the mechanism in capitals');
    assert.equal(classifyAuthenticationError('SASL is configured', undefined), undefined);
    assert.equal(classifyAuthenticationError('Connection error: ECONNRESET', 3), undefined);
    assert.equal(isRetriableKafkaError('SASL OAUTHBEARER: the token in /t (kafka.sasl.tokenFile) expired', undefined), false);
  });

  test('an authorization error response of the Connection layer is debug: its caller names the permission', () => {
    assert.equal(isDeniedResponse('Connection', 'Response DescribeAcls(key: 29, version: 1)', 'Cluster authorization failed'), true);
    assert.equal(isDeniedResponse('Connection', 'Response Metadata(key: 3, version: 6)', 'Not authorized to access topics: [Topic authorization failed]'), true);
    assert.equal(isDeniedResponse('Connection', 'Response Metadata(key: 3, version: 6)', 'This server does not host this topic-partition'), false);
    assert.equal(isDeniedResponse('Producer', 'Response Metadata(key: 3, version: 6)', 'Not authorized to access topics'), false, 'only the Connection layer');
    assert.equal(isDeniedResponse('Connection', 'Failed to send: Response Metadata(key: 3, version: 6)', 'Not authorized'), false, 'only the response line itself');
    assert.equal(isDeniedResponse('Connection', 'Response Metadata(key: 3, version: 6) extra', 'Not authorized'), false);
    assert.equal(isDeniedResponse('Connection', 'Response Metadata(key: 3, version: 6)', undefined), false);
    assert.equal(isDeniedResponse('Connection', 'Response Metadata(key: 3, version: 6)', { message: 'Not authorized' }), false);
    assert.equal(isDeniedResponse('Connection', 'Response DescribeConfigs(key: 32, version: 1)', 'Cluster authorization failed'), true);
    // Refusals kafkajs hides from its caller stay visible: the pipeline's coordinator lookup, its InitProducerId, its group.
    assert.equal(isDeniedResponse('Connection', 'Response GroupCoordinator(key: 10, version: 2)', 'Not authorized to access group: Group authorization failed'), false);
    assert.equal(isDeniedResponse('Connection', 'Response InitProducerId(key: 22, version: 1)', 'Transactional Id authorization failed'), false);
    assert.equal(isDeniedResponse('Connection', 'Response JoinGroup(key: 11, version: 5)', 'Not authorized to access group: Group authorization failed'), false);
    const { lines, logger } = capture('info');
    const log = kafkaLogCreator(logger, () => 0, new ConnectionNoise())!(logLevel.ERROR);
    log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Response DescribeAcls(key: 29, version: 1)', error: 'Cluster authorization failed', broker: 'h:1' } });
    log({ namespace: 'Consumer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Crash: KafkaJSProtocolError: Not authorized to access group: Group authorization failed', groupId: 'g' } });
    assert.deepEqual(lines.map((l) => [l.level, l.msg]), [['error', 'Crash: KafkaJSProtocolError: Not authorized to access group: Group authorization failed']]);
  });

  test('ConnectionNoise: one warning per broker per window, counting what it suppressed; brokers apart', () => {
    const n = new ConnectionNoise(60_000);
    assert.deepEqual(n.record('a:1', 'ECONNREFUSED', 0), { suppressed: {}, total: 0, lastWarnMs: undefined });
    assert.equal(n.record('a:1', 'ECONNREFUSED', 1_000), undefined);
    assert.equal(n.record('a:1', 'closed connection', 59_999), undefined);
    assert.deepEqual(n.record('b:2', 'ECONNREFUSED', 30_000), { suppressed: {}, total: 0, lastWarnMs: undefined }, 'another broker has its own window');
    assert.deepEqual(n.record('a:1', 'ECONNREFUSED', 60_000), { suppressed: { ECONNREFUSED: 1, 'closed connection': 1 }, total: 2, lastWarnMs: 0 });
    assert.equal(n.record('a:1', 'ECONNREFUSED', 60_001), undefined, 'the window starts again at the warning');
    assert.deepEqual(n.record('a:1', 'ECONNRESET', 200_000), { suppressed: { ECONNREFUSED: 1 }, total: 1, lastWarnMs: 60_000 });
  });

  test('the clients of one process share one window per broker (each service has its own clients)', () => {
    const { lines, logger } = capture('info');
    const shared = new ConnectionNoise();
    const entry = { namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Connection error: connect ECONNREFUSED 127.0.0.1:5', broker: '127.0.0.1:5' } };
    for (let i = 0; i < 5; i++) kafkaLogCreator(logger.child({ service: `s${i}` }), () => 1000, shared)!(logLevel.ERROR)(entry);
    assert.equal(lines.length, 1);
  });

  test('a refused authentication, from the authenticator and the broker pool at every probe: one warning per broker per minute', () => {
    const { lines, logger } = capture('info');
    let now = 0;
    const log = kafkaLogCreator(logger, () => now, new ConnectionNoise())!(logLevel.ERROR);
    const msg = 'SASL OAUTHBEARER: the token in /t (kafka.sasl.tokenFile) expired at 2020-01-01T00:00:00.000Z';
    for (let t = 0; t < 30; t++, now += 1000) {
      log({ namespace: 'SASLOAuthBearerAuthenticator', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'SASL OAUTHBEARER authentication failed: x', broker: 'h:1' } });
      log({ namespace: 'BrokerPool', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: msg, retryCount: 0, retryTime: 300 } });
    }
    assert.deepEqual(lines.map((l) => l.level), ['warn', 'warn'], 'one per broker kafkajs named (h:1, and the unnamed one)');
    assert.match(lines[1]!.msg, /^SASL OAUTHBEARER: the token in \/t .* \(further connection errors to brokers kafkajs did not name for a minute at debug\)$/);
  });

  test('ConnectionNoise remembers a bounded number of brokers', () => {
    const n = new ConnectionNoise(60_000, 2);
    n.record('a', 'x', 0);
    n.record('b', 'x', 0);
    n.record('c', 'x', 0);
    assert.ok(n.record('a', 'x', 1), 'the oldest was forgotten, so it warns again');
    assert.equal(n.record('c', 'x', 1), undefined);
  });

  test('a broker down for 15 s: kafkajs\' connection errors come out as one warning per broker per minute, no error, no stack trace', () => {
    const { lines, logger } = capture('debug');
    let now = 1_000_000;
    const log = kafkaLogCreator(logger, () => now, new ConnectionNoise())!(logLevel.ERROR);
    const stack = 'Error: connect ECONNREFUSED 127.0.0.1:39093\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)';
    for (let t = 0; t < 15; t++, now += 1000) {
      for (const port of [39093, 39095]) {
        const broker = `127.0.0.1:${port}`;
        log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: `Connection error: connect ECONNREFUSED ${broker}`, broker, clientId: 'c', stack } });
        log({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: `Failed to send messages: Connection error: connect ECONNREFUSED ${broker}`, retryCount: t, retryTime: 300 } });
      }
    }
    log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Connection error: read ECONNRESET', broker: '127.0.0.1:39093', stack } });
    const above = lines.filter((l) => l.level !== 'debug');
    assert.deepEqual(above.map((l) => [l.level, l.broker]), [['warn', '127.0.0.1:39093'], ['warn', '127.0.0.1:39095']]);
    assert.match(above[0]!.msg, /^Connection error: connect ECONNREFUSED 127\.0\.0\.1:39093 \(further connection errors to 127\.0\.0\.1:39093 for a minute at debug\)$/);
    assert.equal(lines.filter((l) => l.level === 'debug').length, 15 * 4 + 1 - 2, 'every suppressed one is still there at debug');
    assert.ok(lines.every((l) => l.stack === undefined), 'no stack trace on any line below error');
    // A minute after the first warning, the next one says what was suppressed.
    now += 60_000;
    log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Connection timeout', broker: '127.0.0.1:39093' } });
    const last = lines.at(-1)!;
    assert.equal(last.level, 'warn');
    assert.deepEqual(last.suppressed, { ECONNREFUSED: 29, ECONNRESET: 1 });
    assert.match(last.msg, /^Connection timeout \(30 more connection errors to 127\.0\.0\.1:39093 in the last 75 s, at debug; one warning per broker per minute\)$/);
  });

  test('retriable errors are never at error level; a crash is never collapsed; non-retriable errors keep error and their stack', () => {
    const { lines, logger } = capture('info');
    const log = kafkaLogCreator(logger, () => 0, new ConnectionNoise())!(logLevel.ERROR);
    const entry = (namespace: string, message: string, extra: Record<string, unknown> = {}) =>
      log({ namespace, level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message, ...extra } });
    // Leader and coordinator moves are debug (settling noise, above); other retriable errors warn.
    entry('Producer', 'Failed to send messages: This server is not the leader for that topic-partition', { retryCount: 0 });
    entry('Connection', 'Response FindCoordinator(key: 10, version: 2)', { error: 'The group coordinator is not available', broker: 'h:1' });
    entry('Producer', 'Failed to send messages: Messages are rejected since there are fewer in-sync replicas than required', { retryCount: 0 });
    entry('Producer', 'Request Produce(key: 0, version: 7) timed out', { broker: 'h:2' });
    entry('Consumer', 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:1', { groupId: 'g', stack: 'Error\n    at x' });
    entry('Consumer', 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:1', { groupId: 'g', stack: 'Error\n    at x' });
    entry('Consumer', 'Restarting the consumer in 2000ms', { retryCount: 5, retryTime: 2000, groupId: 'g' });
    log({ namespace: 'RequestQueue', level: logLevel.WARN, label: 'WARN', log: { timestamp: '', logger: 'kafkajs', message: 'Response without match', broker: 'h:3', correlationId: 7 } });
    entry('BrokerPool', 'The producer has been fenced', { stack: 'KafkaJSProtocolError: The producer has been fenced\n    at y' });
    assert.deepEqual(lines.map((l) => [l.level, l.msg]), [
      ['warn', 'Failed to send messages: Messages are rejected since there are fewer in-sync replicas than required'],
      ['warn', 'Request Produce(key: 0, version: 7) timed out (further connection errors to h:2 for a minute at debug)'],
      ['warn', 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:1'],
      ['warn', 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:1'],
      ['warn', 'Restarting the consumer in 2000ms'],
      ['error', 'The producer has been fenced'],
    ]);
    assert.equal(lines[2]!.stack, undefined);
    assert.match(String(lines[5]!.stack), /fenced\n\s+at y/);
  });
});

