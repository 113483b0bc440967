// The daemon with an unreachable cluster keeps serving /metrics and /audit, the cluster source
// marked failed, and the file sources audited; a secret in a properties file never shows.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, spawnTracked, waitForLine } from '../harness/index.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { tempDirs } from '../harness/tmp.js';
import { until } from '../harness/wait.js';

const temp = tempDirs('eoswatch-audit-');

describe('audit service in the daemon', () => {
  test('unreachable cluster: /metrics and /audit keep answering, the cluster source is marked failed', async () => {
    const dir = await temp.make();
    const producer = join(dir, 'producer.properties');
    await writeFile(producer, ['acks=1', 'enable.idempotence=false', 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter2-secret";', ''].join('\n'));
    const cfg = join(dir, 'eoswatch.yaml');
    await writeFile(
      cfg,
      [
        'http: {host: 127.0.0.1, port: 0}',
        'shutdown: {gracePeriod: 3s}',
        'kafka: {brokers: ["127.0.0.1:1"], connectionTimeout: 300ms, healthCheckInterval: 1s}',
        'audit:',
        '  schedule: "*/2 * * * * *"',
        '  sourceTimeout: 3s',
        `  producerConfigs: ["${producer}", "${join(dir, 'missing.properties')}"]`,
        '',
      ].join('\n'),
    );
    const child = spawnTracked('node', [...CLI, 'run', '--config', cfg]);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const url = (await waitForLine(child, /"url":"(http:\/\/[^"]+)".*HTTP server listening/))[1]!;
    type Report = { sources: { name: string; ok: boolean; error?: string }[]; findings: { check: string; target: string; passed: boolean; observed: string }[] };
    const report = await until(
      '/audit answered',
      async () => {
        const res = await fetch(`${url}/audit`);
        return res.status === 200 ? ((await res.json()) as Report) : undefined;
      },
      10_000,
      { intervalMs: 100, context: () => out },
    );
    const cluster = report.sources.find((s) => s.name === 'cluster');
    assert.equal(cluster?.ok, false);
    assert.match(cluster?.error ?? '', /ECONNREFUSED|Connection|did not finish within/);
    assert.equal(report.sources.find((s) => s.name.endsWith('missing.properties'))?.ok, false);
    assert.ok(report.findings.some((f) => f.check === 'producer.acks' && f.target.endsWith('producer.properties') && !f.passed));
    const failing = await (await fetch(`${url}/audit?failing=1&pretty=1`)).text();
    assert.match(failing, /^{\n {2}"/, '?pretty=1 indents');
    const failingReport = JSON.parse(failing) as Report;
    assert.ok(failingReport.findings.length > 0 && failingReport.findings.every((f) => !f.passed), '?failing=1 keeps only failed findings');
    assert.ok(report.findings.some((f) => f.passed), 'the default keeps passing checks (backward compatible)');
    const text = await (await fetch(`${url}/metrics`)).text();
    const m = parsePrometheusText(text);
    assert.equal(sampleValue(m, 'eos_audit_source_success', { source: 'cluster' }), 0);
    assert.equal(sampleValue(m, 'eos_audit_check_passed', { check: 'producer.acks', target: `producer:${producer}`, severity: 'critical' }), 0);
    assert.ok((sampleValue(m, 'eos_audit_last_run_timestamp_seconds') ?? 0) > 0);
    const up = await until('eos_kafka_up read', async () => sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), 'eos_kafka_up'), 5000, { intervalMs: 100, context: () => out });
    assert.equal(up, 0);
    const ready = (await (await fetch(`${url}/readyz`)).json()) as { services: Record<string, { ready: boolean }> };
    assert.equal(ready.services.audit?.ready, true);
    const all = JSON.stringify(report) + text + out;
    assert.doesNotMatch(all, /hunter2-secret/);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  });
});
