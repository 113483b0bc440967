// SeriesGauge (src/metrics/series-gauge.ts) and /metrics' renderer on it (src/metrics/render.ts):
// the same bytes as prom-client's registry.metrics() through sets, unchanged sets, inc/dec, removes,
// resets and default labels; a changed series formats exactly its line again, an unchanged value
// formats nothing and leaves the family's block and the whole body as they were; removed series
// are gone from the text.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge, Registry } from 'prom-client';
import { MetricsRenderer } from '../../../src/metrics/render.js';
import { setDefaultLabels } from '../../../src/metrics/registry.js';
import { registrySamples } from '../../../src/metrics/samples.js';
import { SeriesGauge } from '../../../src/metrics/series-gauge.js';
import { parsePrometheusText } from '../../../src/metrics/text-format.js';

function registryWith() {
  const registry = new Registry();
  const registers = [registry];
  const before = new Gauge({ name: 'plain_before', help: 'an ordinary gauge', labelNames: ['a'], registers });
  before.set({ a: 'x' }, 1);
  const lag = new SeriesGauge({ name: 'part_lag', help: 'per partition\\ with a "help"\nline', labelNames: ['topic', 'partition'], registers });
  const stuck = new SeriesGauge({ name: 'part_stuck', help: 'per partition too', labelNames: ['topic', 'partition'], registers });
  const single = new SeriesGauge({ name: 'no_labels', help: 'one series', registers });
  const empty = new SeriesGauge({ name: 'no_series', help: 'labels, no series', labelNames: ['a'], registers });
  new Gauge({ name: 'plain_after', help: 'after them', registers }).set(3);
  return { registry, before, lag, stuck, single, empty };
}

/** The partitions' label objects, as a service keeps them (the same object on every reading). */
function partitions(n: number) {
  return Array.from({ length: n }, (_, i) => ({ topic: i === 3 ? 'quote"and\\back\nslash' : 't', partition: String(i) }));
}

/** The renderer's text, asserted to be prom-client's bytes for the same registry. */
async function same(r: MetricsRenderer, registry: Registry): Promise<string> {
  const text = await r.render();
  assert.equal(text, await registry.metrics());
  return text;
}

const lines = (text: string) => text.split('\n');

describe('SeriesGauge and the renderer', () => {
  test('the same bytes as prom-client through sets, unchanged sets, inc/dec, removes, re-adds, labels() and resets, with and without default labels', async () => {
    for (const defaults of [undefined, { instance: 'i"1', topic: 'shadowed' }]) {
      const g = registryWith();
      if (defaults) setDefaultLabels(g.registry, defaults);
      const r = new MetricsRenderer(g.registry);
      const ps = partitions(6);
      for (const [i, p] of ps.entries()) {
        g.lag.set(p, i * 10);
        g.stuck.set(p, i === 1 ? NaN : i === 2 ? Infinity : i === 4 ? -Infinity : -0);
      }
      await same(r, g.registry);
      g.lag.set(ps[0]!, 0); // unchanged
      g.lag.set({ partition: '1', topic: 't' }, 10); // the same value, another label object in another key order
      g.lag.inc(ps[2]!, 0.5);
      g.lag.dec(ps[3]!);
      g.lag.inc({ topic: 'new', partition: '9' }, 2);
      g.lag.remove(ps[4]!);
      g.lag.remove('t', '5');
      g.single.inc();
      g.single.set(1.5e-7);
      await same(r, g.registry);
      g.lag.set(ps[4]!, 44); // re-added: last, as in prom-client's store
      g.lag.labels('t', '7').set(7);
      g.stuck.labels({ topic: 't', partition: '0' }).inc(3);
      g.empty.set({ a: 'now' }, 1);
      g.before.set({ a: 'y' }, 2);
      const text = await same(r, g.registry);
      // The label object of the last set, as prom-client keeps it (its key order).
      assert.match(text, /^part_lag\{partition="1",topic="t"(,instance="i\\"1")?\} 10$/m);
      const tail = lines(text).filter((l) => l.startsWith('part_lag')).slice(-3);
      assert.deepEqual(tail.map((l) => l.replace(/,instance=.*\}/, '}')), ['part_lag{topic="new",partition="9"} 2', 'part_lag{topic="t",partition="4"} 44', 'part_lag{topic="t",partition="7"} 7']);
      g.stuck.reset();
      g.single.reset();
      g.empty.remove({ a: 'now' });
      await same(r, g.registry);
      assert.deepEqual(await registrySamples(g.registry), parsePrometheusText(await g.registry.metrics()));
    }
  });

  test('a changed series formats exactly its line again; an unchanged value formats nothing and reuses the block and the body', async () => {
    const g = registryWith();
    const r = new MetricsRenderer(g.registry);
    const ps = partitions(100);
    for (const p of ps) {
      g.lag.set(p, 1);
      g.stuck.set(p, 0);
    }
    const first = await same(r, g.registry);
    const built = g.lag.linesBuilt;
    assert.equal(built, 100);
    const bytes = await r.renderBytes();

    // Every series set to the value it has: nothing formatted, the same bytes.
    for (const p of ps) {
      g.lag.set(p, 1);
      g.stuck.set(p, 0);
    }
    const reused = r.bodiesReused;
    assert.equal(await r.renderBytes(), bytes, 'the same Buffer: no family changed');
    assert.equal(r.bodiesReused, reused + 1);
    assert.equal(g.lag.linesBuilt, built);

    // One series changed: its line and no other.
    g.lag.set(ps[42]!, 5);
    const second = await same(r, g.registry);
    assert.equal(g.lag.linesBuilt, built + 1);
    assert.equal(g.stuck.linesBuilt, 100);
    const a = lines(first);
    const b = lines(second);
    assert.equal(a.length, b.length);
    const differ = a.flatMap((l, i) => (l === b[i] ? [] : [[l, b[i]]]));
    assert.deepEqual(differ, [['part_lag{topic="t",partition="42"} 1', 'part_lag{topic="t",partition="42"} 5']]);
    assert.equal(r.bodiesReused, reused + 1, 'a changed family: a new body');

    // Removed series disappear; the lines of the others are not formatted again.
    g.lag.remove(ps[42]!);
    g.lag.remove(ps[0]!);
    const third = await same(r, g.registry);
    assert.equal(g.lag.linesBuilt, built + 1);
    assert.doesNotMatch(third, /^part_lag\{topic="t",partition="(42|0)"\}/m);
    assert.equal(lines(third).length, lines(second).length - 2);

    // Another family changing (an ordinary gauge) leaves the series' lines alone.
    g.before.set({ a: 'x' }, 9);
    await same(r, g.registry);
    assert.equal(g.lag.linesBuilt, built + 1);
  });

  test('other default labels format every line again (and the text has them)', async () => {
    const g = registryWith();
    const r = new MetricsRenderer(g.registry);
    for (const p of partitions(10)) g.lag.set(p, 1);
    await same(r, g.registry);
    assert.equal(g.lag.linesBuilt, 10);
    setDefaultLabels(g.registry, { region: 'eu' });
    assert.match(await same(r, g.registry), /^part_lag\{topic="t",partition="0",region="eu"\} 1$/m);
    assert.equal(g.lag.linesBuilt, 20);
    await same(r, g.registry);
    assert.equal(g.lag.linesBuilt, 20);
  });

  test('a family removed from the registry: the families after it keep their own text (also those without series, whose lines are all \'\')', async () => {
    const g = registryWith();
    const r = new MetricsRenderer(g.registry);
    // part_lag and part_stuck, next to each other, have no series.
    await same(r, g.registry);
    g.registry.removeSingleMetric('plain_before');
    assert.match(await same(r, g.registry), /^# TYPE part_lag gauge\n\n# HELP part_stuck per partition too\n# TYPE part_stuck gauge\n\n/m);
    g.registry.removeSingleMetric('part_lag');
    await same(r, g.registry);
  });

  test('get() as a plain Gauge\'s after the same sets, unchanged sets, inc/dec, removes, re-adds, labels() and resets; prom-client\'s own store stays empty', async () => {
    for (const labelNames of [['topic', 'partition'], []]) {
      const registers: Registry[] = [];
      const plain = new Gauge({ name: 'g', help: 'h', labelNames, registers });
      const series = new SeriesGauge({ name: 'g', help: 'h', labelNames, registers });
      const both = (f: (g: Gauge) => void) => {
        f(plain);
        f(series);
      };
      const step = async (what: string) => {
        assert.deepStrictEqual(await series.get(), await plain.get(), what);
        assert.deepStrictEqual((series as unknown as { hashMap: object }).hashMap, {}, what);
      };
      await step('new');
      if (labelNames.length === 0) {
        both((g) => g.set(3));
        both((g) => g.inc());
        both((g) => g.dec(0.5));
        await step('no labels');
        both((g) => g.reset());
        await step('no labels, reset');
        continue;
      }
      const ps = partitions(5);
      for (const [i, p] of ps.entries()) both((g) => g.set(p, i));
      await step('set');
      both((g) => g.set(ps[0]!, 0)); // unchanged
      both((g) => g.set({ partition: '1', topic: 't' }, 1)); // the same value, another label object
      both((g) => g.set({ partition: '2', topic: 't' }, 7)); // another value, another label object
      both((g) => g.inc(ps[3]!, 0.5));
      both((g) => g.dec(ps[4]!));
      both((g) => g.inc({ topic: 'new', partition: '9' }));
      both((g) => g.dec({ topic: 'new', partition: '10' }, 2));
      both((g) => g.labels('u', '1').set(NaN));
      await step('changed');
      both((g) => g.remove(ps[0]!));
      both((g) => g.remove('t', '4'));
      both((g) => g.remove('absent', '0'));
      await step('removed');
      both((g) => g.set(ps[0]!, 5)); // re-added: last
      await step('re-added');
      assert.equal(series._getValue({ topic: 't', partition: '0' }), 5);
      assert.equal(series._getValue({ topic: 't', partition: '4' }), 0);
      // prom-client's errors, and nothing changed by a call that threw.
      for (const call of [
        (g: Gauge) => g.set({ topic: 't', other: 'x' } as never, 1),
        (g: Gauge) => g.set(ps[1]!, '2' as never),
        (g: Gauge) => g.set(ps[1]! as never),
        (g: Gauge) => g.inc({ other: 'x' } as never),
        (g: Gauge) => g.inc(ps[1]!, '2' as never),
        (g: Gauge) => g.remove('t'),
        (g: Gauge) => g.remove({ other: 'x' } as never),
      ]) {
        const thrown = (g: Gauge) => {
          try {
            call(g);
          } catch (e) {
            return e;
          }
          return undefined;
        };
        const expected = thrown(plain);
        assert.ok(expected instanceof Error, String(call));
        assert.deepStrictEqual(thrown(series), expected, String(call));
      }
      both((g) => g.dec(ps[1]!, '2' as never)); // prom-client negates before it checks: a number
      await step('after errors');
      both((g) => g.reset());
      await step('reset');
      both((g) => g.set(ps[2]!, 1));
      await step('set after reset');
    }
  });

  test('one label object passed to gauges of other label names (its key kept once for all): get() as plain Gauges\'', async () => {
    const registers: Registry[] = [];
    const make = (labelNames: string[]) => ({
      plain: new Gauge({ name: 'g', help: 'h', labelNames, registers }),
      series: new SeriesGauge({ name: 'g', help: 'h', labelNames, registers }),
    });
    const narrow = make(['a']);
    const wide = make(['a', 'b', 'c']);
    const l = { b: 'y', a: 'x' };
    // Asked of a gauge without label b (no check, nothing kept), then set where b is a label.
    assert.equal(narrow.series._getValue(l), (narrow.plain as unknown as { _getValue(l: object): number })._getValue(l));
    for (const g of [wide.plain, wide.series]) g.set(l, 2);
    for (const g of [narrow.plain, narrow.series]) assert.throws(() => g.set(l, 1), /Added label "b"/);
    for (const g of [narrow.plain, narrow.series]) g.set({ a: 'x' }, 1);
    for (const g of [wide.plain, wide.series]) g.set({ a: 'x', b: 'y', c: undefined }, 3); // the same series
    for (const g of [wide.plain, wide.series]) g.inc({ a: 'x', c: 'z' });
    assert.deepStrictEqual(await narrow.series.get(), await narrow.plain.get());
    assert.deepStrictEqual(await wide.series.get(), await wide.plain.get());
    assert.equal((await wide.series.get()).values.length, 2);
  });

  test('has no collect(): its series are set by a service', () => {
    assert.throws(() => new SeriesGauge({ name: 'x', help: 'x', collect() {} }), /no collect/);
  });
});
