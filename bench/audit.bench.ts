// Benchmark: one audit of a 3-node cluster holding 500 topics (every topic audited), the
// target being under 10 s. Run: npm run bench:audit [-- --topics 500 --rounds 3]
import { parseArgs } from 'node:util';
import { cpus, totalmem } from 'node:os';
import { installEmergencyStop, withCluster } from './common.js';
import { createKafka } from '../src/kafka/client.js';
import { ensureTopics } from '../src/kafka/admin.js';
import { createLogger } from '../src/log.js';
import { validateConfig } from '../src/config/load.js';
import { runConfiguredAudit } from '../src/audit/cli.js';

const { values } = parseArgs({ options: { topics: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' } } });
const topics = Number(values.topics);
const rounds = Number(values.rounds);

// Ctrl-C or a failure stops the brokers by pid like the other benchmarks.
installEmergencyStop();
await withCluster({ nodes: 3 }, async (cluster) => {
  const config = validateConfig({ kafka: { brokers: cluster.brokers }, audit: { allTopics: true } }, '(bench)');
  const admin = createKafka(config.kafka, createLogger('silent')).admin();
  await admin.connect();
  const t0 = Date.now();
  for (let i = 0; i < topics; i += 100) {
    await ensureTopics(
      admin,
      Array.from({ length: Math.min(100, topics - i) }, (_, j) => ({ topic: `bench-audit-${String(i + j).padStart(4, '0')}`, numPartitions: 3, replicationFactor: 3 })),
      300_000,
    );
  }
  await admin.disconnect();
  const createMs = Date.now() - t0;
  const times: number[] = [];
  let audited = 0;
  let checks = 0;
  for (let r = 0; r < rounds; r++) {
    const s = Date.now();
    const report = await runConfiguredAudit(config);
    times.push(Date.now() - s);
    audited = report.cluster?.topicsAudited ?? 0;
    checks = report.summary.checks;
    if (report.sources.some((x) => !x.ok)) throw new Error(`a source failed: ${JSON.stringify(report.sources)}`);
  }
  times.sort((a, b) => a - b);
  const line = {
    machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    kafka: cluster.version,
    topicsCreated: topics,
    topicsAudited: audited,
    findings: checks,
    createTopicsMs: createMs,
    auditMs: times,
    medianMs: times[Math.floor(times.length / 2)],
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
});
