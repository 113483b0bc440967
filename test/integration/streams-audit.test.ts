// `eoswatch audit --streams` against a real 1-node cluster: the unsafe example file gives the
// Streams findings, judged with the broker's own settings (default.replication.factor,
// transaction.max.timeout.ms), with the audit's violation exit code; the safe one fails none of
// them, and on its own (no cluster) the audit passes. An unreadable file is a finding naming it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CLI, useCluster } from '../harness/index.js';
import type { Finding } from '../../src/audit/types.js';
import { streamsChecks } from '../../src/audit/checks/streams.js';

const execFileP = promisify(execFile);
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/streams/${name}`, import.meta.url));
const UNSAFE = fixture('streams-unsafe.properties');
const SAFE = fixture('streams-safe.properties');

interface Report {
  findings: Finding[];
  sources: { name: string; ok: boolean; error?: string }[];
}

async function audit(args: string[]): Promise<{ code: number; report: Report }> {
  try {
    const { stdout } = await execFileP('node', [...CLI, 'audit', '--format', 'json', ...args]);
    return { code: 0, report: JSON.parse(stdout) as Report };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    if (!e.stdout?.startsWith('{')) throw new Error(`audit failed (${e.code}): ${e.stderr}`);
    return { code: e.code, report: JSON.parse(e.stdout) as Report };
  }
}

const streamsFindings = (r: Report, file: string): Finding[] => r.findings.filter((f) => f.check.startsWith('streams.') && f.target === `streams:${file}`);
const failedIds = (r: Report, file: string): string[] => streamsFindings(r, file).filter((f) => !f.passed).map((f) => f.check);

describe('audit --streams: 1-node Kafka 4.x cluster', () => {
  const h = useCluster({ nodes: 1, overrides: { 'transaction.max.timeout.ms': '60000' } });
  const dir = mkdtempSync(join(tmpdir(), 'eoswatch-streams-audit-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the unsafe file fails every Streams check, with the broker view; exit code 3', async () => {
    const { code, report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--streams', UNSAFE]);
    assert.equal(code, 3);
    // The report orders findings by severity, then check.
    assert.deepEqual(failedIds(report, UNSAFE).sort(), streamsChecks.map((c) => c.id).sort());
    const by = (id: string): Finding => streamsFindings(report, UNSAFE).find((f) => f.check === id)!;
    assert.equal(by('streams.processing-guarantee').severity, 'critical');
    assert.match(by('streams.processing-guarantee').observed, /^processing\.guarantee=exactly_once_beta: removed in Kafka Streams 4\.0/);
    // -1: the broker's default.replication.factor, read from the live cluster.
    assert.equal(by('streams.replication-factor').observed, "replication.factor=-1: the broker's default.replication.factor=1 (broker 1)");
    assert.match(by('streams.commit-interval').observed, /transaction\.max\.timeout\.ms 60000 ms \(1m\) \(broker 1\); the transaction timeout is below the commit interval: Kafka Streams refuses to start$/);
    assert.equal(by('streams.standby-replicas').severity, 'warning');
    assert.match(by('streams.client-overrides').observed, /main\.consumer\.isolation\.level=read_uncommitted: weakens/);
    for (const f of streamsFindings(report, UNSAFE)) assert.ok(f.rationale.length > 40 && f.remediation.length > 10, f.check);
    assert.ok(report.sources.every((s) => s.ok), JSON.stringify(report.sources));
  });

  test('a transaction timeout above the broker maximum is judged against the live broker', async () => {
    const file = join(dir, 'over-max.properties');
    writeFileSync(file, 'application.id=x\nprocessing.guarantee=exactly_once_v2\nproducer.transaction.timeout.ms=120000\n');
    const { report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--streams', file]);
    const f = streamsFindings(report, file).find((x) => x.check === 'streams.commit-interval')!;
    assert.equal(f.passed, false);
    assert.match(f.observed, /producer\.transaction\.timeout\.ms=120000 \(2m\); transaction\.max\.timeout\.ms 60000 ms \(1m\) \(broker 1\); the transaction timeout is above the broker maximum/);
  });

  test('the safe file fails none of them (the 1-node cluster itself still fails the cluster checks)', async () => {
    const { code, report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--streams', SAFE]);
    assert.equal(streamsFindings(report, SAFE).length, streamsChecks.length);
    assert.deepEqual(failedIds(report, SAFE), []);
    assert.equal(code, 3);
    assert.ok(report.findings.some((f) => f.check === 'cluster.broker-count' && !f.passed));
  });
});

describe('audit --streams without a cluster', () => {
  test('the safe file alone: exit code 0; the unsafe one: 3', async () => {
    const safe = await audit(['--no-cluster', '--streams', SAFE]);
    assert.equal(safe.code, 0);
    assert.deepEqual(failedIds(safe.report, SAFE), []);
    assert.ok(safe.report.findings.every((f) => f.passed), JSON.stringify(safe.report.findings.filter((f) => !f.passed)));
    const unsafe = await audit(['--no-cluster', '--streams', UNSAFE]);
    assert.equal(unsafe.code, 3);
    assert.match(streamsFindings(unsafe.report, UNSAFE).find((f) => f.check === 'streams.replication-factor')!.observed, /which this audit has not read \(audit without the cluster\): it depends on the cluster$/);
  });

  test('an unreadable file is a finding naming it (exit code 1), never a crash', async () => {
    const missing = join(tmpdir(), 'eoswatch-no-such-dir', 'streams.properties');
    const { code, report } = await audit(['--no-cluster', '--streams', missing]);
    assert.equal(code, 1);
    const src = report.findings.find((f) => f.check === 'audit.source' && f.target === `streams:${missing}`)!;
    assert.equal(src.passed, false);
    assert.equal(src.observed, `cannot read ${missing}: no such file`);
  });
});
