// Kafka signals on a real 3-node cluster: eos_kafka_up and the per-broker series while one broker
// is SIGKILLed, SIGSTOPped and brought back (src/kafka/health.ts), and how many log lines a daemon
// with a running pipeline writes, by level, while one broker is down for 15 s
// (src/kafka/log-noise.ts, the kafkajs log creator in src/kafka/client.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { kafkaFor, uniqueName, until, useCluster } from '../harness/index.js';
import { WorkerProcess } from '../../harness/chaos/worker.js';
import { PipelineProcess, pipelineConfig, pipelineTopics } from '../harness/pipeline.js';
import { produceSeed } from '../harness/seed.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';
import { tempDirs } from '../harness/tmp.js';

const temp = tempDirs('eoswatch-signals-');

/** A pipeline process whose whole output also goes to a file (PipelineProcess keeps only a tail in memory). */
function loggedPipeline(config: Record<string, unknown>, logFile: string): WorkerProcess {
  const w = new WorkerProcess(config, uniqueName('noise'), { logFile });
  after(() => w.kill());
  return w;
}

async function metric(w: WorkerProcess, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return sampleValue(parsePrometheusText(await w.metricsText()), name, labels);
}

interface Reach {
  up: number | undefined;
  /** sum(eos_kafka_broker_up) and the number of series. */
  brokersUp: number;
  brokerSeries: number;
  broker: Record<string, number | undefined>;
}

async function reach(p: WorkerProcess, ids: number[]): Promise<Reach> {
  const samples = parsePrometheusText(await p.metricsText());
  return {
    up: sampleValue(samples, 'eos_kafka_up', {}),
    brokersUp: samples.samples.filter((x) => x.name === 'eos_kafka_broker_up').reduce((a, x) => a + x.value, 0),
    brokerSeries: samples.samples.filter((x) => x.name === 'eos_kafka_broker_up').length,
    broker: Object.fromEntries(ids.map((id) => [String(id), sampleValue(samples, 'eos_kafka_broker_up', { broker: String(id) })])),
  };
}

/** Log lines by level (and the commonest messages) in a JSON-lines log, from byte `from` to `to`. */
function countLevels(file: string, from: number, to: number): { levels: Record<string, number>; kafkajs: Record<string, number>; connectionWarnings: Record<string, number>; top: [string, number][]; stacks: number } {
  const text = readFileSync(file).subarray(from, to).toString();
  const levels: Record<string, number> = {};
  const kafkajs: Record<string, number> = {};
  const connectionWarnings: Record<string, number> = {};
  const msgs = new Map<string, number>();
  let stacks = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: { level?: string; msg?: string; stack?: unknown; [k: string]: unknown };
    try {
      l = JSON.parse(line);
    } catch {
      continue;
    }
    const level = l.level ?? '?';
    levels[level] = (levels[level] ?? 0) + 1;
    if (l.component === 'kafkajs') kafkajs[level] = (kafkajs[level] ?? 0) + 1;
    if (l.component === 'kafkajs' && level === 'warn' && typeof l.suppressed === 'object') connectionWarnings[String(l.broker)] = (connectionWarnings[String(l.broker)] ?? 0) + 1;
    if (level !== 'error' && level !== 'fatal' && /\n\s+at /.test(line.replace(/\\n/g, '\n'))) stacks++;
    if (level !== 'debug') {
      const key = `${level} ${String(l.msg).replace(/\d+/g, 'N').slice(0, 100)}`;
      msgs.set(key, (msgs.get(key) ?? 0) + 1);
    }
  }
  return { levels, kafkajs, connectionWarnings, stacks, top: [...msgs].sort((a, b) => b[1] - a[1]).slice(0, 15) };
}

describe('Kafka signals (3-node cluster)', () => {
  const h = useCluster({ nodes: 3 });

  test('reachability: one broker SIGKILLed, then SIGSTOPped, then resumed: eos_kafka_up stays 1, the broker series say which is down', async (t) => {
    const ids = h.cluster.nodes.map((n) => n.id);
    const victim = ids[1]!;
    const p = new PipelineProcess({
      http: { host: '127.0.0.1', port: 0 },
      log: { level: 'info' },
      kafka: { brokers: h.cluster.brokers, healthCheckInterval: '1s', requestTimeout: '2s', connectionTimeout: '1s' },
    });
    const allUp = (r: Reach) => r.up === 1 && r.brokersUp === 3 && r.brokerSeries === 3 && ids.every((id) => r.broker[String(id)] === 1);
    const oneDown = (r: Reach) =>
      r.up === 1 && r.brokersUp === 2 && r.brokerSeries === 3 && r.broker[String(victim)] === 0 && ids.filter((id) => id !== victim).every((id) => r.broker[String(id)] === 1);
    await until('all three brokers up', () => reach(p, ids), 60_000, { done: allUp, intervalMs: 200 });

    // SIGKILL: the cluster is still up, the killed broker is down.
    await h.cluster.kill(victim);
    const k0 = Date.now();
    try {
      await until('killed broker down, cluster up', () => reach(p, ids), 30_000, { done: oneDown, intervalMs: 200 });
      t.diagnostic(`SIGKILLed broker ${victim} counted down after ${Date.now() - k0} ms`);
    } finally {
      await h.cluster.start(victim);
    }
    await until('all three up after restart', () => reach(p, ids), 60_000, { done: allUp, intervalMs: 200 });

    // SIGSTOP: nothing answers, nothing refuses; the probe's timeout must count it down without
    // holding up the others, and eos_kafka_up never drops on the way.
    await h.cluster.pause(victim);
    const t0 = Date.now();
    let sawClusterDown = false;
    try {
      await until('paused broker down, cluster up', async () => {
        const r = await reach(p, ids);
        if (r.up !== 1) sawClusterDown = true;
        return r;
      }, 30_000, { done: oneDown, intervalMs: 200 });
      const took = Date.now() - t0;
      t.diagnostic(`SIGSTOPped broker ${victim} counted down after ${took} ms`);
      // interval 1 s + probe timeout (requestTimeout 2 s) + a scrape; generous for a loaded machine.
      assert.ok(took < 15_000, `the paused broker counted down after ${took} ms`);
      assert.equal(sawClusterDown, false, 'eos_kafka_up stayed 1 while two brokers answered');
    } finally {
      await h.cluster.resume(victim);
    }
    await until('all three up after resume', () => reach(p, ids), 60_000, { done: allUp, intervalMs: 200 });
    await p.kill();
  });

  test('log lines while one broker is SIGKILLed for 15 s under a running pipeline', async (t) => {
    const s = await pipelineTopics(h.cluster.brokers, 'noise', 6, 3);
    // A steady stream into the source, stopped and awaited before the test ends (nothing left running).
    let streaming = true;
    const producer = kafkaFor(s.brokers).producer({ idempotent: false, allowAutoTopicCreation: false, retry: { retries: 2, maxRetryTime: 500 } });
    await producer.connect();
    const stream = (async () => {
      for (let n = 0; streaming; n += 200) {
        await produceSeed(s.brokers, s.source, 6, 200, { startValue: n, producer }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      }
      await producer.disconnect();
    })();
    t.after(async () => {
      streaming = false;
      await stream;
    });
    const dir = await temp.make();
    const logFile = join(dir, 'daemon.log');
    const p = loggedPipeline(pipelineConfig(s, { checkpoint: { interval: '500ms', timeout: '20s', tolerableFailedCheckpoints: 10 } }), logFile);
    await p.waitFor(/partition task initialised/);
    await until('3 checkpoints', () => metric(p, 'eos_checkpoints_total', { outcome: 'completed' }), 60_000, { done: (v) => (v ?? 0) >= 3, intervalMs: 200 });
    const victim = h.cluster.nodes[1]!.id;
    const from = statSync(logFile).size;
    await h.cluster.kill(victim);
    let to = from;
    try {
      await new Promise((r) => setTimeout(r, 15_000)); // the measured window, not a wait for a condition
      to = statSync(logFile).size;
    } finally {
      await h.cluster.start(victim);
    }
    const counts = countLevels(logFile, from, to);
    t.diagnostic(`broker ${victim} SIGKILLed for 15 s: lines by level ${JSON.stringify(counts.levels)} (kafkajs ${JSON.stringify(counts.kafkajs)}), stack traces below error ${counts.stacks}, collapsed connection warnings by broker ${JSON.stringify(counts.connectionWarnings)}`);
    for (const [m, n] of counts.top) t.diagnostic(`  ${n}x ${m}`);
    if (process.env.EOSWATCH_SIGNALS_REPORT) (await import('node:fs')).writeFileSync(process.env.EOSWATCH_SIGNALS_REPORT, JSON.stringify(counts, null, 2));
    const done = (await metric(p, 'eos_checkpoints_total', { outcome: 'completed' })) ?? 0;
    await until('checkpoints again after the broker is back', () => metric(p, 'eos_checkpoints_total', { outcome: 'completed' }), 120_000, { done: (v) => (v ?? 0) >= done + 2, intervalMs: 200 });
    streaming = false;
    await stream;
    await p.kill();
    assert.equal(counts.levels.error ?? 0, 0, 'a broker down is not an error: kafkajs retries it');
    assert.equal(counts.stacks, 0, 'no stack trace below error');
    // One collapsed connection warning per broker per minute: in 15 s, one for the killed broker
    // (and one for a broker whose connections the failover reset, if any).
    assert.ok(Object.values(counts.connectionWarnings).every((n) => n === 1), `connection warnings per broker: ${JSON.stringify(counts.connectionWarnings)}`);
    assert.ok((counts.kafkajs.warn ?? 0) <= 6, `kafkajs warnings in 15 s: ${counts.kafkajs.warn}`);
  });
});
