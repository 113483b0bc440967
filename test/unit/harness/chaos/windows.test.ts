import { test } from 'node:test';
import assert from 'node:assert/strict';
import { windowResults, type ProgressReading } from '../../../../harness/chaos/windows.js';
import { formatChaosMarkdown, formatChaosTable } from '../../../../harness/chaos/report.js';
import type { RoundResult } from '../../../../harness/chaos/runner.js';
import { selectScenarios, ALL_SCENARIOS } from '../../../../harness/chaos/catalogue.js';

const T0 = 1_000_000;
/** Readings every 500 ms: committed grows by 100 per reading, except while stalled. */
function readings(stalledFrom: number, stalledTo: number, until: number): ProgressReading[] {
  const out: ProgressReading[] = [];
  let c = 0n;
  for (let t = T0; t <= until; t += 500) {
    if (t <= stalledFrom || t > stalledTo) c += 100n;
    out.push({ t, committed: c });
  }
  return out;
}

test('a window: start and heal relative to the round, progress at its start, committed meanwhile, recovery after the heal', () => {
  // Stalled from T0+10 s to T0+40 s; healed at T0+35 s, so the first commit after the heal is at T0+40.5 s.
  const r = readings(T0 + 10_000, T0 + 40_000, T0 + 60_000);
  const total = 10_000n;
  const [w] = windowResults([{ fault: 'cut', startedAt: T0 + 10_000, healedAt: T0 + 35_000 }], r, T0, total);
  assert.deepEqual(w, {
    fault: 'cut',
    startedSeconds: 10,
    healedSeconds: 35,
    progressAtStart: 21, // 2,100 of 10,000 committed at T0+10 s (21 readings)
    committedDuring: 0,
    recoverySeconds: 5.5,
  });
});

test('a window the pipeline worked through counts what it committed; one that never healed has no recovery', () => {
  const r = readings(0, 0, T0 + 20_000);
  const [through, open] = windowResults(
    [
      { fault: 'slow', startedAt: T0 + 1000, healedAt: T0 + 3000 },
      { fault: 'whole round', startedAt: T0, healedAt: null },
    ],
    r,
    T0,
    100_000n,
  );
  assert.equal(through!.committedDuring, 400);
  assert.equal(through!.recoverySeconds, 0.5);
  assert.equal(open!.healedSeconds, null);
  assert.equal(open!.recoverySeconds, null);
  assert.equal(open!.committedDuring, 4000);
});

test('no commit after the heal is no recovery, unless everything was committed already', () => {
  const stalled = readings(T0 + 5000, T0 + 99_000, T0 + 20_000);
  const heal = { fault: 'cut', startedAt: T0 + 5000, healedAt: T0 + 10_000 };
  assert.equal(windowResults([heal], stalled, T0, 100_000n)[0]!.recoverySeconds, null);
  // 1,100 committed before the stall: all of a 1,100-record round.
  assert.equal(windowResults([heal], stalled, T0, 1100n)[0]!.recoverySeconds, 0);
});

test('the report lists each fault window with its start, heal and recovery', () => {
  const round = {
    scenario: 'net-split-worker-minority', round: 1, records: 100000, received: 100000, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0,
    abortedRecords: 10, recoverySeconds: 4.5, worstLsoLagRecords: 100, supervisorRestarts: 1, durationSeconds: 90, passed: true, faults: ['split at 20 %'],
    windows: [
      { fault: 'split: broker 2 and the worker | brokers 1 and 3', startedSeconds: 12.25, healedSeconds: 42.5, progressAtStart: 20.1, committedDuring: 0, recoverySeconds: 4.5 },
      { fault: 'slow links', startedSeconds: 0, healedSeconds: null, progressAtStart: 0, committedDuring: 100000, recoverySeconds: null },
    ],
  } as RoundResult;
  const run = { startedAt: '', kafkaVersion: '3.9.1', records: 100000, rounds: 1, partitions: 6, results: [round], passed: true };
  const text = formatChaosTable(run);
  assert.match(text, /net-split-worker-minority #1: split: broker 2 and the worker \| brokers 1 and 3: 12\.3 s → 42\.5 s \(at 20\.1 %\), 0 committed meanwhile, recovery 4\.5 s/);
  assert.match(text, /slow links: 0\.0 s → end of round \(at 0\.0 %\), 100000 committed meanwhile, recovery n\/a \(lasted the whole round\)/);
  const md = formatChaosMarkdown(run);
  assert.match(md, /\| net-split-worker-minority \| 1 \| split: broker 2 and the worker \| brokers 1 and 3 \| 12\.3 s \| 42\.5 s \| 20\.1 % \| 0 \| 4\.5 s \|/);
  // A round without windows adds no section.
  assert.doesNotMatch(formatChaosTable({ ...run, results: [{ ...round, windows: undefined }] }), /fault windows/);
});

test('scenario selection: names and groups, each once, in catalogue order; an unknown name lists the choices', () => {
  const names = (spec: string) => selectScenarios(spec).map((s) => s.name);
  assert.deepEqual(names('all'), ALL_SCENARIOS.map((s) => s.name));
  assert.ok(names('network').length >= 6 && names('network').every((n) => n.startsWith('net-')));
  assert.ok(selectScenarios('network').every((s) => s.network));
  assert.ok(selectScenarios('process').every((s) => !s.network));
  assert.deepEqual(names('net-slow-links, worker-kill,net-slow-links'), ['worker-kill', 'net-slow-links']);
  assert.throws(() => selectScenarios('worker-kill,nope'), /unknown scenario "nope"; expected one of: worker-kill, .*net-worker-flap, all, process, network/);
});
