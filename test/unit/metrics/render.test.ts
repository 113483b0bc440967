// /metrics' renderer (src/metrics/render.ts): the same bytes as prom-client's own renderer for every
// kind of metric, label and value, default labels included, through prom-client's public API only;
// label objects formatted once but changes still seen; concurrent scrapes share one render (one
// collect), and the next scrape renders again. The registry's samples read from its metric objects
// (src/metrics/samples.ts): the same as parsing prom-client's render of it (src/metrics/text-format.ts).
import { test, describe, after } from 'node:test';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { Counter, Gauge, Histogram, Registry, Summary, type Metric } from 'prom-client';
import { MetricsRenderer, rendererFor } from '../../../src/metrics/render.js';
import { createRegistry, defaultLabelsOf, setDefaultLabels, throttleCollect } from '../../../src/metrics/registry.js';
import { registrySamples } from '../../../src/metrics/samples.js';
import { lsoMetrics } from '../../../src/metrics/lso.js';
import { parsePrometheusText } from '../../../src/metrics/text-format.js';
import { startHttpServer, type RunningServer } from '../../../src/http/server.js';
import { validateConfig } from '../../../src/config/load.js';
import { until } from '../../harness/wait.js';

/** A registry with every kind of metric, awkward label values, help texts and values; `defaults`: its default labels. */
function fullRegistry(defaults?: Record<string, string>): { registry: Registry; gauge: Gauge; hist: Histogram } {
  const registry = new Registry();
  if (defaults) setDefaultLabels(registry, defaults);
  const registers = [registry];
  const gauge = new Gauge({ name: 'g_labels', help: 'a gauge with\\ a backslash and\na newline', labelNames: ['topic', 'partition', 'x'], registers });
  gauge.set({ topic: 'plain', partition: '0' }, 1);
  gauge.set({ topic: 'quote"and\\backslash', partition: '1', x: 'new\nline' }, -2.5);
  gauge.set({ partition: '2', topic: 'keys in another order' }, 1e21);
  gauge.set({ topic: 'nan', partition: '3' }, NaN);
  gauge.set({ topic: 'inf', partition: '4' }, Infinity);
  gauge.set({ topic: '-inf', partition: '5' }, -Infinity);
  gauge.set({ topic: 'tiny', partition: '6' }, 1.5e-7);
  gauge.set({ topic: 'C:\\new', partition: '7' }, -0);
  new Gauge({ name: 'g_plain', help: 'no labels', registers }).set(42);
  new Gauge({ name: 'g_empty', help: 'labels, no series', labelNames: ['a'], registers });
  const c = new Counter({ name: 'c_total', help: 'a counter', labelNames: ['kind'], registers });
  c.inc({ kind: 'a' }, 3);
  c.inc();
  const hist = new Histogram({ name: 'h_seconds', help: 'a histogram', labelNames: ['pipeline'], buckets: [0.005, 0.1, 1, 10], registers });
  hist.observe({ pipeline: 'p"1' }, 0.05);
  hist.observe({ pipeline: 'p"1' }, 5);
  hist.observe({ pipeline: 'other' }, 50);
  hist.zero({ pipeline: 'zeroed' });
  new Histogram({ name: 'h_plain', help: 'a histogram without labels', buckets: [1], registers }).observe(0.5);
  const s = new Summary({ name: 's_seconds', help: 'a summary', labelNames: ['q'], percentiles: [0.5, 0.99], registers });
  for (let i = 1; i <= 100; i++) s.observe({ q: 'x' }, i / 100);
  new Summary({ name: 's_plain', help: 'a summary without labels', percentiles: [0.9], registers }).observe(3);
  let n = 0;
  new Gauge({
    name: 'g_collected',
    help: 'set by collect()',
    labelNames: ['n'],
    registers,
    collect() {
      n++;
      this.reset();
      this.set({ n: String(n % 2) }, n);
    },
  });
  new Gauge({
    name: 'g_async',
    help: 'set by an async collect()',
    registers,
    async collect() {
      await new Promise((r) => setImmediate(r));
      this.set(7);
    },
  });
  return { registry, gauge, hist };
}

describe('MetricsRenderer', () => {
  test('writes exactly what prom-client writes, for every kind of metric, label and value', async () => {
    const a = fullRegistry();
    const b = fullRegistry();
    const r = new MetricsRenderer(b.registry);
    // Twice: the second render runs on cached label texts.
    for (let i = 0; i < 2; i++) assert.equal(await r.render(), await a.registry.metrics());
    assert.match(await r.render(), /^g_labels\{topic="quote\\"and\\\\backslash",partition="1",x="new\\nline"\} -2.5$/m);
    assert.match(await r.render(), /^h_seconds_bucket\{le="0.1",pipeline="p\\"1"\} 1$/m);
  });

  test('default labels: the same bytes as prom-client (after a series\' own labels; a histogram\'s le first), a label of the series\' own wins', async () => {
    // `pipeline` is also a label of h_seconds: the series' value is written, where prom-client writes it.
    const defaults = { instance: 'host"1\\x', pipeline: 'default' };
    const a = fullRegistry(defaults);
    const b = fullRegistry(defaults);
    const r = new MetricsRenderer(b.registry);
    // Each step renders both registries once (g_collected counts the collects).
    const same = async (): Promise<string> => {
      const text = await r.render();
      assert.equal(text, await a.registry.metrics());
      return text;
    };
    await same();
    const text = await same();
    assert.match(text, /^h_seconds_bucket\{le="0.1",instance="host\\"1\\\\x",pipeline="p\\"1"\} 1$/m);
    assert.match(text, /^h_plain_sum\{instance="host\\"1\\\\x",pipeline="default"\} 0.5$/m);
    assert.match(text, /^g_labels\{topic="plain",partition="0",instance="host\\"1\\\\x",pipeline="default"\} 1$/m);
    // Other default labels: the next render has them (label texts formatted with the old ones are not used again).
    for (const { registry } of [a, b]) setDefaultLabels(registry, { region: 'eu' });
    assert.match(await same(), /^g_labels\{topic="plain",partition="0",region="eu"\} 1$/m);
    for (const { registry } of [a, b]) setDefaultLabels(registry, {});
    assert.equal(defaultLabelsOf(b.registry), undefined);
    assert.match(await same(), /^g_labels\{topic="plain",partition="0"\} 1$/m);
  });

  test('reads prom-client through its public API only: a registry that has nothing but getMetricsAsArray() and metrics with nothing but get()', async () => {
    const defaults = { instance: 'i' };
    const a = fullRegistry(defaults);
    const b = fullRegistry();
    // No getForPromString, no hashMap, no _defaultLabels: only what prom-client documents.
    const publicOnly = {
      contentType: b.registry.contentType,
      getMetricsAsArray: () => (b.registry.getMetricsAsArray() as unknown as Metric[]).map((m) => ({ get: () => m.get() })),
      setDefaultLabels: () => undefined,
    } as unknown as Registry;
    setDefaultLabels(publicOnly, defaults);
    assert.equal(await new MetricsRenderer(publicOnly).render(), await a.registry.metrics());
    assert.deepEqual(await registrySamples(publicOnly), parsePrometheusText(await a.registry.metrics()));
  });

  test('changes after a render are in the next one: new values, new series, removed series, a new label object', async () => {
    const a = fullRegistry();
    const b = fullRegistry();
    const r = new MetricsRenderer(b.registry);
    // One render on each side (collect() counts them).
    await a.registry.metrics();
    await r.render();
    for (const { gauge, hist } of [a, b]) {
      gauge.set({ topic: 'plain', partition: '0' }, 99);
      gauge.inc({ topic: 'added', partition: '7' });
      gauge.remove({ topic: 'nan', partition: '3' });
      gauge.set({ partition: '2', topic: 'keys in another order' }, 5);
      hist.observe({ pipeline: 'p"1' }, 0.001);
    }
    const text = await r.render();
    assert.equal(text, await a.registry.metrics());
    assert.match(text, /^g_labels\{topic="plain",partition="0"\} 99$/m);
    assert.match(text, /^g_labels\{topic="added",partition="7"\} 1$/m);
    assert.doesNotMatch(text, /topic="nan"/);
  });

  test('eoswatch registry with the LSO monitor: the same samples as prom-client', async () => {
    const registry = createRegistry();
    const m = lsoMetrics(registry);
    for (let p = 0; p < 50; p++) {
      const l = { pipeline: 'orders', topic: 'orders.enriched', partition: String(p) };
      m.lag.set(l, p);
      m.stuck.set(l, p / 10);
      m.openAge.set(l, 0);
    }
    const ours = parsePrometheusText(await rendererFor(registry).render());
    const theirs = parsePrometheusText(await registry.metrics());
    // Process metrics move between two renders; everything else must be equal.
    const stable = (p: ReturnType<typeof parsePrometheusText>) => p.samples.filter((s) => !/^(process_|nodejs_)/.test(s.name));
    assert.deepEqual(stable(ours), stable(theirs));
    assert.deepEqual([...ours.types], [...theirs.types]);
    assert.equal(stable(ours).filter((s) => s.name === 'eos_partition_lso_lag_records').length, 50);
    assert.equal(rendererFor(registry), rendererFor(registry), 'one renderer per registry');
  });

  test('renders started while one runs share it (one collect); the next one collects again', async () => {
    const registry = new Registry();
    let collects = 0;
    let release!: () => void;
    new Gauge({
      name: 'slow',
      help: 'a collect that waits',
      registers: [registry],
      async collect() {
        collects++;
        await new Promise<void>((r) => (release = r));
        this.set(collects);
      },
    });
    const r = new MetricsRenderer(registry);
    const first = r.render();
    const others = [r.render(), r.renderBytes(), r.render()];
    await new Promise((res) => setImmediate(res));
    release();
    const [a, b, bytes, c] = await Promise.all([first, others[0], others[1], others[2]]);
    assert.equal(collects, 1);
    assert.match(a as string, /^slow 1$/m);
    assert.equal(b, a);
    assert.equal(c, a);
    assert.equal((bytes as Buffer).toString('utf8'), a);
    const next = r.render();
    await new Promise((res) => setImmediate(res));
    release();
    assert.match(await next, /^slow 2$/m);
    assert.equal(collects, 2);
  });

  test('a render ends with a turn of the event loop: a scrape read in it shares the render', async () => {
    const registry = new Registry();
    let collects = 0;
    new Gauge({
      name: 'renders',
      help: 'how often collect ran',
      registers: [registry],
      collect() {
        collects++;
        this.set(collects);
      },
    });
    // 20,000 series: milliseconds of formatting, all of it synchronous work.
    const wide = new Gauge({ name: 'wide', help: 'many series', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 20_000; i++) wide.set({ i: String(i) }, i);
    const r = new MetricsRenderer(registry);
    const first = r.render();
    // What an HTTP request that came in while the render ran does when the event loop reads it.
    const second = await new Promise<Promise<string>>((res) => setImmediate(() => res(r.render())));
    const [a, b] = await Promise.all([first, second]);
    assert.equal(collects, 1, 'one render served both');
    assert.equal(b, a);
    assert.match(a, /^wide\{i="19999"\} 19999$/m);
    assert.match(await r.render(), /^renders 2$/m, 'the next scrape renders again');
  });

  test('a failed render fails the scrapes that shared it, and the next scrape renders again', async () => {
    const registry = new Registry();
    let fail = true;
    new Gauge({
      name: 'flaky',
      help: 'fails once',
      registers: [registry],
      collect() {
        if (fail) throw new Error('collect failed');
        this.set(1);
      },
    });
    const r = new MetricsRenderer(registry);
    await assert.rejects(Promise.all([r.render(), r.render()]), /collect failed/);
    fail = false;
    assert.match(await r.render(), /^flaky 1$/m);
  });
});

describe('MetricsRenderer: the gzip body', () => {
  test('decompresses to exactly the text; a changed family (earlier, later, a SeriesGauge, one added) changes both; unchanged, the same bytes', async () => {
    const { registry, gauge } = fullRegistry();
    const lso = lsoMetrics(registry);
    for (let p = 0; p < 200; p++) lso.lag.set({ pipeline: 'orders', topic: 'orders.enriched', partition: String(p) }, p);
    const r = new MetricsRenderer(registry);
    const both = async (): Promise<{ text: Buffer; gz: Buffer }> => {
      // One render for both (they share it).
      const [gz, text] = await Promise.all([r.renderGzipBytes(), r.renderBytes()]);
      assert.equal(gz[0], 0x1f);
      assert.equal(gz[1], 0x8b);
      // gunzipSync checks the trailer's CRC-32 and length too.
      assert.deepEqual(gunzipSync(gz), text);
      return { text, gz };
    };
    const first = await both();
    assert.ok(first.gz.length * 5 < first.text.length, `compressed: ${first.gz.length} of ${first.text.length} bytes`);
    // g_collected changes on every collect (its own value, a label that alternates): a new body each time.
    const second = await both();
    assert.notDeepEqual(second.text, first.text);
    // The first family longer (every later family moves), a SeriesGauge's line, a family added last.
    gauge.set({ topic: 'plain', partition: '0' }, 123456789);
    lso.lag.set({ pipeline: 'orders', topic: 'orders.enriched', partition: '7' }, 77777);
    new Gauge({ name: 'z_added', help: 'registered after the first renders', registers: [registry] }).set(5);
    const third = await both();
    const text = third.text.toString('utf8');
    assert.match(text, /^g_labels\{topic="plain",partition="0"\} 123456789$/m);
    assert.match(text, /^eos_partition_lso_lag_records\{pipeline="orders",topic="orders.enriched",partition="7"\} 77777$/m);
    assert.match(text, /^z_added 5$/m);
    // A family removed: the families after it move back.
    registry.removeSingleMetric('g_labels');
    const fourth = await both();
    assert.doesNotMatch(fourth.text.toString('utf8'), /^g_labels/m);
  });

  test('while no family changed, every scrape gets the same gzip bytes (compressed once)', async () => {
    const registry = new Registry();
    const g = new Gauge({ name: 'steady', help: 'set from outside', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 1000; i++) g.set({ i: String(i) }, i);
    const r = new MetricsRenderer(registry);
    const a = await r.renderGzipBytes();
    const [b, c] = await Promise.all([r.renderGzipBytes(), r.renderGzipBytes()]);
    assert.equal(b, a, 'the same Buffer, not a new compression');
    assert.equal(c, a);
    g.set({ i: '999' }, -1);
    const d = await r.renderGzipBytes();
    assert.notEqual(d, a);
    assert.match(gunzipSync(d).toString('utf8'), /^steady\{i="999"\} -1$/m);
  });

  test('a change of more than a megabyte (compressed on the thread pool) and then a small one: both decompress to the text', async () => {
    const registry = new Registry();
    const wide = new Gauge({ name: 'wide', help: 'many series', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 60_000; i++) wide.set({ i: String(i) }, i);
    const small = new Gauge({ name: 'small', help: 'one series', registers: [registry] });
    small.set(1);
    const r = new MetricsRenderer(registry);
    for (const change of [() => wide.set({ i: '0' }, -1), () => small.set(2), () => undefined]) {
      change();
      const [gz, text] = await Promise.all([r.renderGzipBytes(), r.renderBytes()]);
      assert.deepEqual(gunzipSync(gz), text);
    }
    const [gz, text] = await Promise.all([r.renderGzipBytes(), r.renderBytes()]);
    assert.ok(text.length > 1 << 20, `${text.length} bytes`);
    assert.match(gunzipSync(gz).toString('utf8'), /^wide\{i="0"\} -1\nwide\{i="1"\} 1$/m);
    assert.match(gunzipSync(gz).toString('utf8'), /^small 2$/m);
  });

  test('an empty registry: the gzip body of its one newline', async () => {
    const r = new MetricsRenderer(new Registry());
    assert.equal(gunzipSync(await r.renderGzipBytes()).toString('utf8'), await new Registry().metrics().then(() => r.render()));
    assert.equal(await r.render(), '\n');
  });
});

describe('registrySamples: the registry\'s series from its metric objects', () => {
  test('the same samples, types and help texts as parsing prom-client\'s render, with and without default labels', async () => {
    for (const defaults of [undefined, { instance: 'host"1\\x', pipeline: 'default' }]) {
      const a = fullRegistry(defaults);
      const b = fullRegistry(defaults);
      const parsed = parsePrometheusText(await a.registry.metrics());
      const read = await registrySamples(b.registry);
      assert.deepEqual(read, parsed);
      // What the comparison covers: escaped label values and help texts, NaN, ±Inf, le, quantile, default labels.
      const g = (topic: string) => read.samples.find((s) => s.name === 'g_labels' && s.labels.topic === topic);
      assert.deepEqual(g('quote"and\\backslash')?.labels.x, 'new\nline');
      assert.ok(g('C:\\new'), 'a backslash before an n is no newline');
      assert.ok(Number.isNaN(g('nan')?.value));
      assert.equal(g('-inf')?.value, -Infinity);
      assert.equal(read.help.get('g_labels'), 'a gauge with\\ a backslash and\na newline');
      const inf = read.samples.find((s) => s.name === 'h_seconds_bucket' && s.labels.le === '+Inf' && s.labels.pipeline === 'p"1');
      assert.equal(inf?.value, 2);
      assert.equal(read.samples.find((s) => s.name === 'h_seconds_bucket' && s.labels.le === '0.005' && s.labels.pipeline === 'zeroed')?.value, 0);
      assert.equal(read.samples.find((s) => s.name === 's_seconds' && s.labels.quantile === '0.99')?.value, 0.995);
      assert.equal(read.samples.find((s) => s.name === 'g_plain')?.labels.instance, defaults?.instance);
      assert.equal(read.samples.filter((s) => s.name === 'h_seconds_sum').map((s) => s.labels.pipeline).join(), 'p"1,other,zeroed', 'the series\' own label over the default');
    }
  });

  test('eoswatch registry: the same samples as parsing /metrics\' render of it', async () => {
    const registry = createRegistry();
    const m = lsoMetrics(registry);
    for (let p = 0; p < 5; p++) m.lag.set({ pipeline: 'orders', topic: 'orders.enriched', partition: String(p) }, p);
    const read = await registrySamples(registry);
    const parsed = parsePrometheusText(await rendererFor(registry).render());
    // Process metrics are collected at most once a second: both reads see the same values.
    assert.deepEqual(read.samples.filter((s) => s.name !== 'nodejs_eventloop_lag_seconds'), parsed.samples.filter((s) => s.name !== 'nodejs_eventloop_lag_seconds'));
    assert.deepEqual(read.types, parsed.types);
    assert.equal(read.samples.filter((s) => s.name === 'eos_partition_lso_lag_records').length, 5);
  });
});

describe('process metrics collected at most once a second', () => {
  test('throttleCollect: a collect within the interval of the last one does nothing; the values stay', async () => {
    const registry = new Registry();
    let t = 0;
    let runs = 0;
    const g = new Gauge({
      name: 'g_throttled',
      help: 'collected',
      registers: [registry],
      collect() {
        runs++;
        this.set(runs);
      },
    });
    throttleCollect(g, 1000, () => t);
    const r = new MetricsRenderer(registry);
    assert.match(await r.render(), /^g_throttled 1$/m);
    t = 999;
    assert.match(await r.render(), /^g_throttled 1$/m, 'the last values, not collected again');
    t = 1000;
    assert.match(await r.render(), /^g_throttled 2$/m);
    assert.equal(runs, 2);
    throttleCollect(new Gauge({ name: 'g_plain2', help: 'no collect', registers: [registry] }), 1000, () => t);
    assert.match(await r.render(), /^g_plain2 0$/m, 'a metric without collect() is left alone');
  });

  test('the registry still has every process metric, with values, on back-to-back renders', async () => {
    const registry = createRegistry();
    const r = rendererFor(registry);
    for (let i = 0; i < 2; i++) {
      const p = parsePrometheusText(await r.render());
      for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'eos_build_info']) {
        const v = p.samples.find((s) => s.name === name)?.value;
        assert.ok(v !== undefined && Number.isFinite(v), `${name} in render ${i + 1}`);
      }
    }
  });
});

describe('/metrics', () => {
  const servers: RunningServer[] = [];
  after(async () => {
    for (const s of servers) await s.close(500);
  });

  async function get(url: string, method = 'GET'): Promise<{ status: number; headers: Headers; body: string }> {
    const res = await fetch(url, { method });
    return { status: res.status, headers: res.headers, body: await res.text() };
  }

  test('concurrent scrapes get the same body from one render; a later scrape sees new values', async () => {
    const registry = createRegistry();
    let collects = 0;
    let gate: Promise<void> = Promise.resolve();
    new Gauge({
      name: 'eos_test_renders',
      help: 'how often collect ran',
      registers: [registry],
      async collect() {
        collects++;
        await gate;
        this.set(collects);
      },
    });
    const config = validateConfig({ http: { host: '127.0.0.1', port: 0 } }, 'test', {});
    const s = await startHttpServer({ registry, readiness: () => ({ ready: true, services: {} }) }, config.http);
    servers.push(s);
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    let arrived = 0;
    s.server.on('request', () => arrived++);
    const scrapes = Array.from({ length: 10 }, () => get(`${s.url}/metrics`));
    // Every scrape has reached the server while the first render is held.
    await until('the first render started and all 10 scrapes arrived', () => collects >= 1 && arrived === 10, 5000, { intervalMs: 10 });
    open();
    const replies = await Promise.all(scrapes);
    assert.ok(collects >= 1 && collects < 10, `the 10 scrapes shared renders (${collects} renders)`);
    for (const r of replies) {
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), registry.contentType);
      // fetch asks for gzip and decompresses it.
      assert.equal(r.headers.get('content-encoding'), 'gzip');
      assert.doesNotThrow(() => parsePrometheusText(r.body));
    }
    const bodies = new Set(replies.map((r) => /^eos_test_renders (\d+)$/m.exec(r.body)![1]));
    assert.ok(bodies.size <= collects, 'every body comes from one of the renders');
    const before = collects;
    const later = await get(`${s.url}/metrics`);
    assert.match(later.body, new RegExp(`^eos_test_renders ${before + 1}$`, 'm'));
    const head = await get(`${s.url}/metrics`, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  /** A GET with exactly these headers (fetch adds its own Accept-Encoding), the body as received. */
  function raw(url: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.once('error', reject);
      });
      req.once('error', reject);
      req.end();
    });
  }

  test('gzip to a client that accepts it, with Vary; the text to one that does not, or sends no Accept-Encoding', async () => {
    const registry = createRegistry();
    const g = new Gauge({ name: 'eos_test_value', help: 'set by the test', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 500; i++) g.set({ i: String(i) }, i);
    const config = validateConfig({ http: { host: '127.0.0.1', port: 0 } }, 'test', {});
    const s = await startHttpServer({ registry, readiness: () => ({ ready: true, services: {} }) }, config.http);
    servers.push(s);
    const url = `${s.url}/metrics`;
    const check = async (headers: Record<string, string>, gzip: boolean): Promise<string> => {
      const r = await raw(url, headers);
      const what = JSON.stringify(headers);
      assert.equal(r.status, 200, what);
      assert.equal(r.headers['content-type'], registry.contentType, what);
      assert.equal(r.headers.vary, 'Accept-Encoding', what);
      assert.equal(r.headers['content-encoding'], gzip ? 'gzip' : undefined, what);
      assert.equal(Number(r.headers['content-length']), r.body.length, what);
      const text = (gzip ? gunzipSync(r.body) : r.body).toString('utf8');
      assert.match(text, /^eos_test_value\{i="499"\} -?\d+$/m, what);
      assert.doesNotThrow(() => parsePrometheusText(text));
      return text;
    };
    const zipped = await check({ 'accept-encoding': 'gzip' }, true);
    await check({ 'accept-encoding': 'gzip, deflate, br' }, true);
    const plain = await check({}, false);
    await check({ 'accept-encoding': 'identity' }, false);
    await check({ 'accept-encoding': 'gzip;q=0' }, false);
    await check({ 'accept-encoding': 'gzip;q=0, identity' }, false);
    // The same families either way (the process metrics move between renders).
    const stable = (t: string) => t.split('\n').filter((l) => l.includes('eos_test_value'));
    assert.deepEqual(stable(zipped), stable(plain));
    // A change is in the next gzip body too.
    g.set({ i: '499' }, -7);
    assert.match(await check({ 'accept-encoding': 'gzip' }, true), /^eos_test_value\{i="499"\} -7$/m);
    // HEAD: the headers of the gzip body, no body.
    const head = await raw(url, { 'accept-encoding': 'gzip' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'gzip');
    assert.equal(head.body.length, 0);
  });
});
