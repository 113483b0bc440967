// The HTTP server's hardening and the exporter toolkit's web configuration: methods, timeouts,
// the connection cap, real HTTPS with certificates made in this process (test/harness/tls.ts),
// client certificates, bcrypt basic auth, the probes' exemption, and a bad web configuration file
// as exit 2 (`eoswatch run` with such files: test/integration/cli.test.ts).
import { test, describe, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { connect as tlsConnect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { Router } from 'express';
import bcrypt from 'bcryptjs';
import { parseListenAddress, startHttpServer, type RunningServer } from '../../../src/http/server.js';
import { loadWebConfig } from '../../../src/http/web-config.js';
import { rateLimiter, subjectAltNames } from '../../../src/http/auth.js';
import { validateConfig } from '../../../src/config/load.js';
import { createRegistry } from '../../../src/metrics/registry.js';
import { EosError, exitCodeFor } from '../../../src/errors.js';
import { send } from '../../harness/http.js';
import { makeTestPki, renewServerCertificate, webConfigFile, type TestPki } from '../../harness/tls.js';
import { memoryLogger } from '../../harness/log.js';
import { until } from '../../harness/wait.js';
import { tempDirs } from '../../harness/tmp.js';

/** The SHA-256 fingerprint of the certificate a new TLS connection to the port is given. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

const servers: RunningServer[] = [];
const temp = tempDirs('eoswatch-http-');
after(async () => {
  for (const s of servers) await s.close(500);
});

let ready = true;
async function start(http: Record<string, unknown> = {}): Promise<RunningServer> {
  const config = validateConfig({ http: { host: '127.0.0.1', port: 0, ...http } }, 'test', {});
  const audit = Router().get('/', (_req, res) => void res.json({ findings: [] }));
  const s = await startHttpServer(
    {
      registry: createRegistry(),
      readiness: () => ({ ready, services: { kafka: ready ? { ready: true } : { ready: false, detail: 'cluster unreachable: 127.0.0.1:9092' } } }),
      routes: [{ path: '/audit', description: 'audit', router: audit }],
    },
    config.http,
  );
  servers.push(s);
  return s;
}

/** Resolves when the server closes the socket, with what it sent; rejects after limitMs. */
function closedWithin(socket: Socket, limitMs: number): Promise<{ ms: number; data: string }> {
  const t0 = Date.now();
  let data = '';
  socket.on('data', (d) => (data += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`socket still open after ${limitMs} ms; received: ${JSON.stringify(data)}`)), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ ms: Date.now() - t0, data });
    });
  });
}

async function openSocket(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  await new Promise((r) => s.once('connect', r));
  return s;
}

describe('HTTP hardening', () => {
  test('a wrong method is 405 with Allow on every route; HEAD and GET work; unknown paths stay 404', async () => {
    const s = await start();
    for (const path of ['/metrics', '/healthz', '/readyz', '/', '/audit']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const r = await send(`${s.url}${path}`, { method });
        assert.equal(r.status, 405, `${method} ${path}`);
        assert.equal(r.headers.allow, 'GET, HEAD', `${method} ${path}`);
      }
      assert.equal((await send(`${s.url}${path}`)).status, 200, `GET ${path}`);
      assert.equal((await send(`${s.url}${path}`, { method: 'HEAD' })).status, 200, `HEAD ${path}`);
    }
    assert.equal((await send(`${s.url}/nope`, { method: 'POST' })).status, 404);
  });

  test('a trickled request body or header is cut after http.requestTimeout, not after minutes', async () => {
    const s = await start({ requestTimeout: '1s' });
    // Body: a byte every 200 ms of a declared 10000.
    const body = await openSocket(s.port);
    body.write('POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n');
    const trickle = setInterval(() => body.write('a'), 200);
    // Headers: one header line every 200 ms, never the blank line.
    const headers = await openSocket(s.port);
    headers.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
    const trickle2 = setInterval(() => headers.write('X-Slow: 1\r\n'), 200);
    try {
      const [b, h] = await Promise.all([closedWithin(body, 8000), closedWithin(headers, 8000)]);
      assert.ok(b.ms < 4000 && h.ms < 4000, `closed after ${b.ms} and ${h.ms} ms`);
      assert.match(h.data, /^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
      clearInterval(trickle2);
      body.destroy();
      headers.destroy();
    }
  });

  test('at most http.maxConnections sockets: one more is closed at once, and a freed place is usable again', async () => {
    const s = await start({ maxConnections: 3, requestTimeout: '30s' });
    const held = [await openSocket(s.port), await openSocket(s.port), await openSocket(s.port)];
    try {
      const extra = await openSocket(s.port);
      const closed = await closedWithin(extra, 3000);
      assert.equal(closed.data, '', 'the extra connection is dropped unanswered');
      await assert.rejects(send(`${s.url}/healthz`));
      held.pop()!.destroy();
      const status = await until('an answer once a held connection closed', async () => (await send(`${s.url}/healthz`)).status, 5000, { intervalMs: 50 });
      assert.equal(status, 200);
    } finally {
      for (const h of held) h.destroy();
    }
  });

  test('open to the network without authentication: a warning; on loopback or with basic auth: none', async () => {
    const dir = await temp.make();
    const web = join(dir, 'web.yml');
    await writeFile(web, `basic_auth_users:\n  p: ${bcrypt.hashSync('pw', 4)}\n`);
    const warned: boolean[] = [];
    for (const http of [{ host: '0.0.0.0' }, { host: '127.0.0.1' }, { host: '0.0.0.0', webConfigFile: web }]) {
      const { log, lines } = memoryLogger();
      const config = validateConfig({ http: { port: 0, ...http } }, 'test', {});
      servers.push(await startHttpServer({ registry: createRegistry(), readiness: () => ({ ready: true, services: {} }), logger: log }, config.http));
      warned.push(lines.some((l) => /"level":"warn".*served without authentication/.test(l)));
    }
    assert.deepEqual(warned, [true, false, false]);
  });

  test('--web.listen-address syntax', () => {
    assert.deepEqual(parseListenAddress(':7395'), { host: '0.0.0.0', port: 7395 });
    assert.deepEqual(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseListenAddress('[::1]:9000'), { host: '::1', port: 9000 });
    for (const bad of ['7395', 'host:', 'a:b', ':70000', '[::1]']) assert.throws(() => parseListenAddress(bad), /expected \[HOST\]:PORT/, bad);
  });
});

describe('web configuration: TLS, client certificates and basic auth', () => {
  let pki: TestPki;
  const password = 'correct horse battery staple';
  before(async () => {
    pki = await makeTestPki();
    temp.track(pki.dir);
  });

  const webConfig = (text: string): Promise<string> => webConfigFile(pki, text);

  const tlsBlock = (clientAuth?: string) =>
    ['tls_server_config:', '  cert_file: server.crt', '  key_file: server.key', ...(clientAuth ? [`  client_auth_type: ${clientAuth}`, '  client_ca_file: ca.crt'] : [])].join('\n');

  test('HTTPS with client certificates required and bcrypt basic auth', async () => {
    const hash = bcrypt.hashSync(password, 4);
    // A hash made by the Go exporter toolkit (its fixed hash of "fakepassword", $2y$, cost 10): the same files work in both.
    const goHash = '$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi';
    const file = await webConfig(`${tlsBlock('RequireAndVerifyClientCert')}\nbasic_auth_users:\n  prometheus: ${hash}\n  gopher: ${goHash}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n`);
    const s = await start({ webConfigFile: file });
    assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const good = { ca: pki.ca, ...pki.client };

    const ok = await send(`${s.url}/metrics`, { ...good, auth: `prometheus:${password}` });
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^# HELP /m);
    assert.equal(ok.headers['x-frame-options'], 'deny');
    assert.equal((await send(`${s.url}/metrics`, { ...good, auth: 'gopher:fakepassword' })).status, 200, 'a $2y$ hash from the Go toolkit');

    for (const auth of [`prometheus:${password}x`, 'gopher:wrong', `nobody:${password}`, undefined]) {
      const r = await send(`${s.url}/metrics`, { ...good, auth });
      assert.equal(r.status, 401, `auth ${auth}`);
      assert.match(String(r.headers['www-authenticate']), /^Basic\b/, `auth ${auth}`);
      assert.doesNotMatch(r.body, /HELP/);
    }
    assert.equal((await send(`${s.url}/audit`, { ...good })).status, 401, '/audit is protected too');

    // Without a client certificate, or with one the CA did not sign: refused even with the password.
    const noCert = await send(`${s.url}/metrics`, { ca: pki.ca, auth: `prometheus:${password}` });
    assert.equal(noCert.status, 401);
    assert.match(noCert.body, /a client certificate is required/);
    const rogue = await send(`${s.url}/metrics`, { ca: pki.ca, ...pki.rogue, auth: `prometheus:${password}` });
    assert.equal(rogue.status, 401);
    assert.match(rogue.body, /not trusted/);

    // Probes: /healthz and /readyz answer without credentials or certificate; /readyz says what is wrong only to an authenticated client.
    assert.equal((await send(`${s.url}/healthz`, { ca: pki.ca })).status, 200);
    ready = false;
    try {
      const probe = await send(`${s.url}/readyz`, { ca: pki.ca });
      assert.equal(probe.status, 503);
      assert.deepEqual(JSON.parse(probe.body), { status: 'not ready' });
      const full = await send(`${s.url}/readyz`, { ...good, auth: `prometheus:${password}` });
      assert.equal(full.status, 503);
      assert.deepEqual((JSON.parse(full.body) as { notReady: string[] }).notReady, ['kafka: cluster unreachable: 127.0.0.1:9092']);
    } finally {
      ready = true;
    }
    // Plain HTTP on the TLS port gets no answer, and a client that does not trust the server certificate fails.
    await assert.rejects(send(s.url.replace('https:', 'http:') + '/healthz'));
    await assert.rejects(send(`${s.url}/healthz`, {}), /self[- ]signed|unable to verify|certificate/i);
  });

  test('auth_excluded_paths replaces the default: [] protects the probes too', async () => {
    const file = await webConfig(`basic_auth_users:\n  p: ${bcrypt.hashSync(password, 4)}\nauth_excluded_paths: []\n`);
    const s = await start({ webConfigFile: file });
    assert.match(s.url, /^http:/, 'no tls_server_config: plain HTTP');
    const r = await send(`${s.url}/healthz`);
    assert.equal(r.status, 401);
    assert.equal((await send(`${s.url}/healthz`, { auth: `p:${password}` })).status, 200);
  });

  test('client_allowed_sans and VerifyClientCertIfGiven', async () => {
    const sans = await webConfig(`${tlsBlock('RequireAndVerifyClientCert')}\n  client_allowed_sans: [other.example]\n`);
    const s1 = await start({ webConfigFile: sans });
    const r1 = await send(`${s1.url}/metrics`, { ca: pki.ca, ...pki.client });
    assert.equal(r1.status, 401);
    assert.match(r1.body, /subject alternative names/);
    const ifGiven = await webConfig(tlsBlock('VerifyClientCertIfGiven'));
    const s2 = await start({ webConfigFile: ifGiven });
    assert.equal((await send(`${s2.url}/metrics`, { ca: pki.ca })).status, 200, 'no certificate: fine');
    assert.equal((await send(`${s2.url}/metrics`, { ca: pki.ca, ...pki.client })).status, 200, 'a trusted one: fine');
    assert.equal((await send(`${s2.url}/metrics`, { ca: pki.ca, ...pki.rogue })).status, 401, 'an untrusted one: refused');
  });

  test('a renewed certificate is presented to new connections without a restart; a half-written rotation is logged and the old one kept', async () => {
    // Its own directory: the rotation touches no other test's files.
    const dir = await temp.make();
    await copyFile(join(pki.dir, pki.files.serverCert), join(dir, 'tls.crt'));
    await copyFile(join(pki.dir, pki.files.serverKey), join(dir, 'tls.key'));
    const file = join(dir, 'web.yml');
    const tlsFiles = 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n';
    await writeFile(file, `${tlsFiles}basic_auth_users:\n  p: ${bcrypt.hashSync(password, 4)}\n`);
    const { log, lines } = memoryLogger();
    const registry = createRegistry();
    const config = validateConfig({ http: { host: '127.0.0.1', port: 0, webConfigFile: file, webConfigReloadInterval: '1s' } }, 'test', {});
    const s = await startHttpServer({ registry, readiness: () => ({ ready: true, services: {} }), logger: log }, config.http);
    servers.push(s);
    const reloadOk = async () => (await registry.getSingleMetric('eos_web_config_last_reload_successful')!.get()).values[0]?.value;
    const logged = (re: RegExp) => lines.some((l) => re.test(l));
    const original = fingerprintOf(await readFile(join(pki.dir, pki.files.serverCert), 'utf8'));
    assert.equal(await presented(s.port), original);
    assert.equal(await reloadOk(), 1);

    const renewed = await renewServerCertificate(pki, `renewed-${Math.random().toString(36).slice(2)}`);
    const next = fingerprintOf(renewed.cert);
    assert.notEqual(next, original);
    // Half-written: the new certificate beside the old key. Logged (once), the old pair kept.
    await writeFile(join(dir, 'tls.crt'), renewed.cert);
    await until('the mismatch is logged', () => logged(/"level":"error".*does not match cert_file.*not reloaded; the running configuration is kept/));
    assert.equal(await presented(s.port), original, 'new connections still get the old certificate');
    assert.equal((await send(`${s.url}/metrics`, { ca: pki.ca, auth: `p:${password}` })).status, 200);
    assert.equal(await reloadOk(), 0);
    // Two more reads of the same bad pair (the timer's reads are the same call).
    assert.equal(await s.reloadWebConfig!(), 'failed');
    assert.equal(await s.reloadWebConfig!(), 'failed');
    assert.equal(lines.filter((l) => /does not match cert_file/.test(l)).length, 1, 'a pair that stays bad is logged once');

    // The key follows: new connections get the renewed certificate.
    await writeFile(join(dir, 'tls.key'), renewed.key);
    await until('the renewed certificate is presented', async () => (await presented(s.port)) === next);
    assert.ok(logged(new RegExp(`"level":"info".*"serial":"${renewed.serial}".*web configuration file reloaded`)), 'the reload names the new certificate');
    assert.equal(await reloadOk(), 1);
    assert.equal((await send(`${s.url}/metrics`, { ca: pki.ca, auth: `p:${password}` })).status, 200);

    // Users apply from the next request.
    await writeFile(file, `${tlsFiles}basic_auth_users:\n  q: ${bcrypt.hashSync('other', 4)}\n`);
    await until('the new user is accepted', async () => (await send(`${s.url}/metrics`, { ca: pki.ca, auth: 'q:other' })).status === 200);
    assert.equal((await send(`${s.url}/metrics`, { ca: pki.ca, auth: `p:${password}` })).status, 401, 'the removed user is refused');

    // Turning TLS off needs a new listener: logged, HTTPS with the renewed certificate kept.
    await writeFile(file, `basic_auth_users:\n  q: ${bcrypt.hashSync('other', 4)}\n`);
    await until('the refusal is logged', () => logged(/tls_server_config removed: turning TLS on or off needs a restart/));
    assert.equal(await presented(s.port), next);
    assert.equal(await reloadOk(), 0);
    assert.equal(await s.reloadWebConfig!(), 'needs-restart');
  });

  test('a bad web configuration file: every problem with file, line and key, exit code 2', async () => {
    const cases: [string, RegExp[]][] = [
      [
        'tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n  client_auth_type: Sometimes\nbasic_auth_users:\n  alice: hunter2-plaintext\n',
        [/web-\w+\.yml:4:21: \/tls_server_config\/client_auth_type: found "Sometimes", expected one of: NoClientCert/],
      ],
      [
        'tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\nbasic_auth_users:\n  alice: hunter2-plaintext\n',
        [/web-\w+\.yml:2:14: \/tls_server_config\/cert_file: cannot read "missing\.crt": no such file/, /web-\w+\.yml:5:10: \/basic_auth_users\/alice: expected a bcrypt hash/],
      ],
      ['tls_server_config:\n  cert_file: server.crt\n  key_file: ca.key\n', [/\/tls_server_config\/key_file: does not match cert_file/]],
      ['tls_server_config:\n  cert_file: server.crt\n', [/\/tls_server_config\/key_file: missing: TLS needs key_file/]],
      ['tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n', [/\/tls_server_config\/client_auth_type: client CAs are configured without a client_auth_type/]],
      ['basic_auth_user:\n  alice: x\n', [/web-\w+\.yml:1:1: \/basic_auth_user: unknown key "basic_auth_user"; expected one of: tls_server_config, http_server_config, rate_limit, basic_auth_users, auth_excluded_paths/]],
      ['http_server_config:\n  headers:\n    X-Powered-By: me\n', [/\/http_server_config\/headers\/X-Powered-By: header "X-Powered-By" cannot be configured/]],
    ];
    for (const [text, expected] of cases) {
      const file = await webConfig(text);
      await assert.rejects(loadWebConfig(file), (err: EosError) => {
        assert.equal(exitCodeFor(err), 2);
        const all = [err.message, ...err.details].join('\n');
        for (const e of expected) assert.match(all, e);
        assert.doesNotMatch(all, /hunter2-plaintext/);
        return true;
      });
    }
  });
});

describe('auth helpers', () => {
  test('rate limiter: burst, then one per interval', () => {
    let now = 0;
    const allow = rateLimiter(2, 1000, () => now);
    assert.deepEqual([allow(), allow(), allow()], [true, true, false]);
    now = 999;
    assert.equal(allow(), false);
    now = 1500;
    assert.deepEqual([allow(), allow()], [true, false]);
    now = 10_000;
    assert.deepEqual([allow(), allow(), allow()], [true, true, false], 'never more than the burst');
  });

  test('subject alternative names as Node reports them', () => {
    assert.deepEqual(subjectAltNames('DNS:prometheus.monitoring.svc, IP Address:10.0.0.1, URI:spiffe://cluster/ns/monitoring'), ['prometheus.monitoring.svc', '10.0.0.1', 'spiffe://cluster/ns/monitoring']);
    assert.deepEqual(subjectAltNames(undefined), []);
  });
});
