// Lag arithmetic with crafted readings: the offset-time table's interpolation and its error
// bound, lag to the LSO versus the high watermark, the stuck clock, and group/topic selection.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { OffsetTimeTable } from '../../../src/kafka/offset-time.js';
import { LagCalculator } from '../../../src/lag/group-lag.js';
import { exactNames, nameMatcher, selectGroups, watchedTopic } from '../../../src/lag/selection.js';
import { validateConfig } from '../../../src/config/load.js';
import { EosError } from '../../../src/errors.js';

const ends = (topic: string, ...parts: [high: number, lso: number][]) => new Map([[topic, parts.map(([high, lso], partition) => ({ partition, high: BigInt(high), lso: BigInt(lso) }))]]);
const committed = (topic: string, ...offsets: number[]) => new Map([[topic, new Map(offsets.map((o, p) => [p, BigInt(o)]))]]);

describe('offset-time table', () => {
  test('interpolates inside the reading window in which the offset appeared', () => {
    const t = new OffsetTimeTable();
    t.add(0, 100n);
    t.add(10_000, 200n);
    // Record 149 is the 50th of the 100 records that appeared during (0, 10 s].
    assert.deepEqual(t.arrival(149n), { at: 5000, estimate: 'interpolated' });
    assert.equal(t.arrival(100n)!.at, 100, 'the first record of the window');
    assert.equal(t.arrival(199n)!.at, 10_000, 'the last record of the window');
    assert.equal(t.arrival(200n), null, 'not there yet');
    assert.equal(t.ageSeconds(149n, 65_000), 60);
    assert.equal(t.ageSeconds(250n, 65_000), 0);
  });

  test('a flat run keeps its first and last reading, so a burst after a pause lands in the last window', () => {
    const t = new OffsetTimeTable();
    t.add(0, 100n);
    for (let at = 15_000; at <= 60_000; at += 15_000) t.add(at, 100n);
    t.add(75_000, 110n);
    assert.equal(t.size, 3, 'first of the run, last of the run, the new end');
    const a = t.arrival(100n)!;
    // The burst came between 60 s and 75 s: the estimate lies in that window, not spread over 0..75 s.
    assert.ok(a.at > 60_000 && a.at <= 75_000, `arrival ${a.at}`);
  });

  test('the error is bounded by the reading interval for any arrival pattern inside a window', () => {
    // Records 0..999 appear at random times; readings every 15 s.
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const arrivals = Array.from({ length: 1000 }, () => rnd() * 600_000).sort((a, b) => a - b);
    const t = new OffsetTimeTable();
    for (let at = 0; at <= 615_000; at += 15_000) t.add(at, BigInt(arrivals.filter((x) => x <= at).length));
    let worst = 0;
    for (let o = 0; o < 1000; o++) worst = Math.max(worst, Math.abs(t.arrival(BigInt(o))!.at - arrivals[o]!));
    assert.ok(worst <= 15_000, `worst error ${worst} ms`);
    assert.ok(worst > 0, 'interpolation is an estimate');
  });

  test('older than the oldest reading kept: extrapolated at the average rate, never later than that reading', () => {
    const t = new OffsetTimeTable(3);
    t.add(0, 0n);
    t.add(10_000, 100n);
    t.add(20_000, 200n);
    t.add(30_000, 300n);
    assert.equal(t.size, 3, 'capacity bounds the table');
    const a = t.arrival(50n)!;
    assert.equal(a.estimate, 'extrapolated');
    assert.equal(a.at, 5000);
    const only = new OffsetTimeTable();
    only.add(42_000, 10n);
    assert.deepEqual(only.arrival(3n), { at: 42_000, estimate: 'extrapolated' }, 'one reading: a lower bound on the age');
  });

  test('an end offset that goes backwards (topic recreated) restarts the table', () => {
    const t = new OffsetTimeTable();
    t.add(0, 500n);
    t.add(1000, 600n);
    t.add(2000, 5n);
    assert.equal(t.size, 1);
    assert.equal(t.arrival(550n), null);
  });

  test('after a restart, an offset before its first reading is bounded by that reading, never extrapolated into the past', () => {
    // A new leader's high watermark a little behind its predecessor's, then growing slowly again;
    // the LSO held by an open transaction below the restart's reading.
    const t = new OffsetTimeTable();
    for (let at = 0; at <= 100_000; at += 1000) t.add(at, BigInt(at / 10));
    t.add(101_000, 9_900n);
    t.add(111_000, 9_910n);
    t.add(121_000, 9_920n);
    assert.deepEqual(t.arrival(5_000n), { at: 101_000, estimate: 'extrapolated' }, 'the restart, not 101 s − 4,900 × 20 s / 20 records');
    assert.equal(t.ageSeconds(5_000n, 121_000), 20);
    assert.equal(t.arrival(9_905n)!.estimate, 'interpolated', 'inside the table: as before');
  });
});

describe('lag calculator', () => {
  test('a consumer at the LSO behind an open transaction has no lag; HW lag counts the open transaction', () => {
    const c = new LagCalculator();
    const e = ends('t', [150, 100]);
    c.observe(e, 0);
    const [l] = c.lag('g', committed('t', 100), e, 0);
    assert.deepEqual([l!.lsoLag, l!.hwLag, l!.lagSeconds, l!.stuckSeconds], [0, 50, 0, 0]);
  });

  test('a paused consumer: lag in seconds grows at 1 s/s and the stuck clock runs while the committed offset stands', () => {
    const c = new LagCalculator();
    let out;
    for (let s = 0; s <= 60; s += 15) {
      const e = ends('t', [100 + s * 10, 100 + s * 10]);
      c.observe(e, s * 1000);
      out = c.lag('g', committed('t', 100), e, s * 1000)[0]!;
    }
    // Record 100 appeared during (0, 15 s]: 60 s later its age is 45..60 s.
    assert.ok(out!.lagSeconds >= 45 && out!.lagSeconds <= 60, `lag ${out!.lagSeconds}`);
    assert.equal(out!.stuckSeconds, 60);
    assert.equal(out!.lsoLag, 600);
    const e = ends('t', [800, 800]);
    c.observe(e, 70_000);
    const later = c.lag('g', committed('t', 100), e, 70_000)[0]!;
    assert.ok(Math.abs(later.lagSeconds - out!.lagSeconds - 10) < 1e-9, 'one more second of age per second');
  });

  test('a consumer that moves is not stuck; catching up resets the clocks', () => {
    const c = new LagCalculator();
    const e1 = ends('t', [200, 200]);
    c.observe(e1, 0);
    c.lag('g', committed('t', 100), e1, 0);
    const e2 = ends('t', [300, 300]);
    c.observe(e2, 15_000);
    assert.equal(c.lag('g', committed('t', 150), e2, 15_000)[0]!.stuckSeconds, 0, 'committed offset moved');
    assert.equal(c.lag('g', committed('t', 150), e2, 30_000)[0]!.stuckSeconds, 15);
    const caught = c.lag('g', committed('t', 300), e2, 45_000)[0]!;
    assert.deepEqual([caught.lsoLag, caught.lagSeconds, caught.stuckSeconds], [0, 0, 0]);
  });

  test('aborted records and markers below the LSO are offsets, a consumer past them has no lag', () => {
    const c = new LagCalculator();
    // 10 aborted records + 1 abort marker: HW and LSO at 111, a read_committed consumer commits 111.
    const e = ends('t', [111, 111]);
    c.observe(e, 0);
    const [l] = c.lag('g', committed('t', 111), e, 0);
    assert.deepEqual([l!.lsoLag, l!.hwLag], [0, 0]);
  });

  test('groups are independent; partitions without end offsets are left out; a forgotten group restarts its clock', () => {
    const c = new LagCalculator();
    const e = ends('t', [100, 100], [100, 100]);
    c.observe(e, 0);
    c.lag('a', committed('t', 50, 50), e, 0);
    c.lag('b', committed('t', 100), e, 0);
    const a = c.lag('a', new Map([['t', new Map([[0, 50n], [5, 1n]])], ['gone', new Map([[0, 1n]])]]), e, 10_000);
    assert.deepEqual(a.map((l) => [l.partition, l.stuckSeconds]), [[0, 10]]);
    assert.equal(c.lag('b', committed('t', 100), e, 10_000)[0]!.stuckSeconds, 0);
    c.forgetGroup('a');
    assert.equal(c.lag('a', committed('t', 50), e, 20_000)[0]!.stuckSeconds, 0);
  });

  test('a partition a group stopped reporting loses its clock, and only that group\'s; two groups on the same partitions keep their own', () => {
    const c = new LagCalculator();
    const e = ends('t', [100, 100], [100, 100]);
    c.observe(e, 0);
    c.lag('a', committed('t', 50, 50), e, 0);
    c.lag('b', committed('t', 60, 60), e, 0);
    // a reports partition 0 only: partition 1's clock goes; b's clocks on both run on.
    c.lag('a', committed('t', 50), e, 10_000);
    assert.deepEqual(c.lag('b', committed('t', 60, 60), e, 20_000).map((l) => l.stuckSeconds), [20, 20]);
    assert.deepEqual(c.lag('a', committed('t', 50, 50), e, 20_000).map((l) => l.stuckSeconds), [20, 0]);
    assert.equal(c.unmoved('a', 't', 1, 50n), true, 'the restarted clock holds the offset');
    assert.equal(c.unmoved('b', 't', 0, 50n), false, 'b committed 60');
  });
});

describe('group and topic selection', () => {
  test('names, /patterns/ and all', () => {
    const listed = ['flink-orders', 'flink-payments', 'billing', 'eoswatch-orders'];
    assert.deepEqual(selectGroups(listed, nameMatcher(['billing', '/^flink-/'])), ['billing', 'flink-orders', 'flink-payments']);
    assert.deepEqual(selectGroups(listed, nameMatcher(['all'])), [...listed].sort());
    assert.deepEqual(selectGroups(listed, nameMatcher(['flink'])), [], 'a plain name matches exactly');
    assert.equal(watchedTopic('__consumer_offsets', null), false);
    assert.equal(watchedTopic('orders', nameMatcher(['/^ord/'])), true);
    assert.equal(watchedTopic('payments', nameMatcher(['/^ord/'])), false);
  });

  test('the exact names among the selectors (the groups expected to exist, asked for by name when not listed)', () => {
    assert.deepEqual(exactNames(['zeta', '/^flink-/', 'billing', 'zeta']), ['billing', 'zeta']);
    assert.deepEqual(exactNames(['billing', 'all']), [], 'all names none in particular');
    assert.deepEqual(exactNames(['/^a/', '/b$/']), []);
  });

  test('a pattern that does not compile is a configuration error naming the key', () => {
    assert.throws(
      () => validateConfig({ lag: { enabled: true, groups: ['ok', '/(unclosed/'] } }, 'eoswatch.yaml', {}),
      (err: unknown) =>
        err instanceof EosError && (err.details ?? []).some((d) => d.startsWith('eoswatch.yaml: /lag/groups/1: found "/(unclosed/", expected a name or a /regular expression/')),
    );
    const c = validateConfig({ lag: { enabled: true } }, 'eoswatch.yaml', {});
    assert.deepEqual(c.lag, { enabled: true, groups: ['all'], topics: [], interval: 15_000 });
  });
});
