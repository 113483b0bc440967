// The pipeline's group membership at default fetch sizes, on a real 1-node cluster: a member stays
// in its group through a checkpoint longer than the session timeout, and a partition task dropped
// by an assignment handled late (after a newer one gave the partition back) does not leave the
// partition behind. Both were found by `npm run chaos -- --full-speed` (docs/chaos-results.md).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import { useCluster } from '../harness/index.js';
import { assertExactlyOnce, checkSink, produceSeed } from '../harness/seed.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, tails, waitCaughtUp, type PipelineSetup } from '../harness/pipeline.js';
import { until } from '../harness/wait.js';
import { parseConfigText } from '../../src/config/load.js';
import { createKafka } from '../../src/kafka/client.js';
import { createLogger } from '../../src/log.js';
import { PipelineService } from '../../src/pipeline/pipeline-service.js';
import type { PartitionTask } from '../../src/pipeline/partition-task.js';

describe('pipeline group membership (1-node cluster)', () => {
  const h = useCluster({ nodes: 1 });
  const setup = (name: string, partitions: number): Promise<PipelineSetup> => pipelineTopics(h.cluster.brokers, name, partitions, 1);

  test('a checkpoint longer than the session timeout does not cost the member its place in the group', async () => {
    const s = await setup('long-checkpoint', 6);
    const sent = await produceSeed(s.brokers, s.source, 6, 30_000);
    // The first checkpoint with transactions waits 10 s between preCommit and commit, with the
    // barrier up: every partition's next (default-size) batch waits for it. kafkajs heartbeats only
    // between batches, so without heartbeats during the wait the 6 s session expires mid-checkpoint.
    const p = new PipelineProcess(
      pipelineConfig(s, {
        checkpoint: { interval: '500ms', timeout: '30s' },
        transactionTimeout: '60s',
        sessionTimeout: '6s',
        heartbeatInterval: '1s',
        faultInjection: { commitDelay: '10s', commitDelayTimes: 1 },
      }),
    );
    await p.waitFor(/fault injection: pre-committed, waiting before commit/, 120_000);
    await waitCaughtUp(s.brokers, s.groupId, s.source, 180_000);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent), sent.length, tails(p));
    assert.doesNotMatch(p.output, /The coordinator is not aware of this member|The group is rebalancing/, `the member was never evicted\n${tails(p)}`);
    assert.equal(p.output.match(/"msg":"partitions assigned"/g)?.length, 1, `one assignment, never a second\n${tails(p)}`);
    assert.equal(await p.metric('eos_checkpoints_total', { outcome: 'timeout' }), 0);
    assert.equal(await p.metric('eos_checkpoints_total', { outcome: 'failed' }), 0);
    await p.kill();
  });

  test('an assignment handled after a newer one gave the partition back: the partition is read again, not left behind', async () => {
    const s = await setup('late-assignment', 1);
    const sent = await produceSeed(s.brokers, s.source, 1, 300);
    // In-process, to hand the pipeline an assignment late, as happens when assignments queue behind
    // a long checkpoint while the group rebalances twice. A checkpoint every 20 s leaves the window
    // between "every record is in the open transaction" and its commit wide open.
    const file = 'late-assignment.yaml';
    const config = parseConfigText(stringify(pipelineConfig(s, { checkpoint: { interval: '20s', timeout: '10s' } })), file);
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) }));
    const kafka = createKafka(config.kafka, logger, { retry: { initialRetryTime: 20, maxRetryTime: 1000, retries: 40 } });
    const failures: Error[] = [];
    const svc = new PipelineService(config.pipeline, kafka, { logger, registry: new Registry(), fatal: (err) => failures.push(err) });
    after(() => svc.stop());
    await svc.start();
    const internals = svc as unknown as { tasks: { get(partition: number): PartitionTask | undefined; onAssignment(assigned: Set<number>): Promise<void> }; control: { run(fn: () => Promise<void>): Promise<void> } };
    await until('the task to take in all 300 records', () => internals.tasks.get(0)?.nextOffset === 300n, 60_000, { intervalMs: 20, context: () => lines.slice(-20).join('') });
    // kafkajs has fetched to the end of the partition; nothing is committed yet. An older assignment
    // without partition 0 arrives now, while the current one (which has it) stands.
    await internals.control.run(() => internals.tasks.onAssignment(new Set()));
    await waitCaughtUp(s.brokers, s.groupId, s.source, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${lines.slice(-20).join('')}`);
    });
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent), sent.length, lines.slice(-20).join(''));
    assert.deepEqual(failures, []);
    await svc.stop();
  });
});
