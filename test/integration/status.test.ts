// eoswatch status and the status page against a running daemon on a 1-node cluster: the summary
// shows live numbers, the alert conditions of a single broker (critical audit findings) make the
// exit code 3, an unreachable eoswatch 1; headless Chromium renders the page with live numbers,
// no console error, and shows a hostile file name as text. The screenshot stays in a temp dir
// that the test removes (EOSWATCH_KEEP_SCREENSHOT=DIR copies it there first).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, runEoswatch, spawnTracked, uniqueName, useCluster, waitForLine } from '../harness/index.js';

const execFileP = promisify(execFile);

describe('eoswatch status and the status page (1-node cluster)', () => {
  const h = useCluster({ nodes: 1 });
  let dir = '';
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('status summarises a running daemon; the page renders it live in Chromium', async () => {
    dir = await mkdtemp(join(tmpdir(), 'eoswatch-status-'));
    const id = uniqueName('status');
    // A client file whose name is markup: the page must show it as text.
    const hostileDir = join(dir, '<img src=x onerror=alert(1)>');
    await mkdir(hostileDir);
    const hostile = join(hostileDir, 'producer.properties');
    await writeFile(hostile, 'acks=1\n');
    const cfg = join(dir, 'eoswatch.yaml');
    await writeFile(
      cfg,
      [
        'http: {host: 127.0.0.1, port: 0}',
        'shutdown: {gracePeriod: 5s}',
        `kafka: {brokers: [${h.cluster.brokers.join(', ')}], healthCheckInterval: 1s}`,
        `pipeline: {enabled: true, name: st, sourceTopic: ${id}-in, sinkTopic: ${id}-out, groupId: ${id}, transactionalIdPrefix: ${id}}`,
        'canary: {enabled: true, id: st, rate: 20}',
        'lsoMonitor: {interval: 1s}',
        'audit:',
        `  producerConfigs: ["${hostile}"]`,
        '',
      ].join('\n'),
    );
    const made = await runEoswatch(['topics', 'create', '--config', cfg, '--partitions', '2', '--allow-unsafe']);
    assert.equal(made.code, 0, made.stderr);
    const child = spawnTracked('node', [...CLI, 'run', '--config', cfg, '--log-format', 'json']);
    const url = (await waitForLine(child, /"url":"(http:\/\/[^"]+)".*HTTP server listening/, 60_000))[1]!;

    type Summary = { pipeline: { checkpointsCompleted: number; recordsOut: number }; canary: { received: number; duplicates: number; lost: number }; alerts: { alert: string }[]; audit: { critical: number } | null };
    let status: { code: number; summary: Summary } | undefined;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      const r = await runEoswatch(['status', '--url', url, '--window', '1s', '--format', 'json']);
      const summary = JSON.parse(r.stdout) as Summary;
      status = { code: r.code, summary };
      if (summary.canary.received > 0 && summary.audit && summary.pipeline.checkpointsCompleted > 0) break;
      await new Promise((res) => setTimeout(res, 1000));
    }
    assert.ok(status && status.summary.canary.received > 0, `canary records come back: ${JSON.stringify(status?.summary)}`);
    assert.equal(status.summary.canary.duplicates + status.summary.canary.lost, 0);
    assert.ok(status.summary.audit!.critical > 0, 'a single broker has critical findings');
    assert.ok(status.summary.alerts.some((a) => a.alert === 'EosConfigAuditCritical'));
    assert.equal(status.code, 3, 'an alert condition holds: exit 3');
    const table = await runEoswatch(['status', '--url', url, '--window', '0']);
    assert.match(table.stdout, /^checkpoints\s+[\d,]+ completed, \d+ failed/m);
    assert.match(table.stdout, /^alerts\s+EosConfigAuditCritical: /m);
    const gone = await runEoswatch(['status', '--url', 'http://127.0.0.1:9', '--window', '0']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /cannot reach eoswatch at http:\/\/127\.0\.0\.1:9\/metrics/);

    // The page in headless Chromium: the DOM after its scripts ran, the console, a screenshot.
    const shot = join(dir, 'status-page.png');
    const chromium = (extra: string[]) =>
      execFileP('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--user-data-dir=' + join(dir, 'chromium'), '--window-size=1280,1600', '--virtual-time-budget=6000', '--enable-logging=stderr', '--v=0', ...extra, `${url}/`], { timeout: 120_000, maxBuffer: 32 * 1024 * 1024 });
    const { stdout: dom, stderr: console } = await chromium(['--dump-dom']);
    await chromium([`--screenshot=${shot}`]);
    const out = /id="pipeline-records-out">([^<]*)</.exec(dom)?.[1];
    assert.ok(out && Number(out.split(' ')[0]!.replace(/,/g, '')) > 0, `records out shown: ${out}`);
    assert.match(dom, /id="canary-received">[1-9][\d,]*</);
    assert.match(dom, /<span id="state" class="badge alerting">\d+ alert condition\(s\)<\/span>/);
    assert.match(dom, /<td class="critical">critical<\/td><td>topic\.replication-factor<\/td>/);
    assert.match(dom, /<td>producer:[^<]*&lt;img src=x onerror=alert\(1\)&gt;\/producer\.properties<\/td>/, 'the file name is text');
    assert.doesNotMatch(dom, /<img src="?x/, 'no element made from data');
    assert.doesNotMatch(console, /CONSOLE\(\d+\).*(Uncaught|Error)|Failed to load resource/i, console.split('\n').filter((l) => /CONSOLE|Failed/.test(l)).join('\n'));
    assert.ok((await stat(shot)).size > 10_000, 'a screenshot was taken');
    if (process.env.EOSWATCH_KEEP_SCREENSHOT) await copyFile(shot, join(process.env.EOSWATCH_KEEP_SCREENSHOT, 'status-page.png'));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  });
});
