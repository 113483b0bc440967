// eoswatch's own pipeline configuration, expressed as the client settings and checkpointing it
// amounts to, so that the same checks judge it as they judge a Java client or a Flink job.
import type { PipelineConfig } from '../../config/types.js';
import type { AuditFacts, CheckpointFacts, ClientFacts } from '../types.js';
import type { AuditSource } from '../runner.js';

export function pipelineFacts(p: PipelineConfig): { clients: ClientFacts[]; checkpoints: CheckpointFacts[] } {
  const target = `pipeline:${p.name}`;
  const eos = p.mode === 'EXACTLY_ONCE';
  const producer = new Map<string, string>([
    ['enable.idempotence', 'true'],
    ['acks', 'all'],
    ['max.in.flight.requests.per.connection', '1'],
  ]);
  if (eos) {
    producer.set('transactional.id', `${p.transactionalIdPrefix}-${p.sourceTopic}-<partition>`);
    producer.set('transaction.timeout.ms', String(p.transactionTimeout));
  }
  const consumer = new Map<string, string>([
    ['isolation.level', 'read_committed'],
    // A one-run --start-from is an explicit bootstrap; the audit judges the standing setting.
    ['auto.offset.reset', p.configuredStartFrom ?? p.startFrom],
    ['enable.auto.commit', 'false'],
  ]);
  return {
    clients: [
      { role: 'producer', file: target, props: producer },
      { role: 'consumer', file: target, props: consumer },
    ],
    checkpoints: [
      {
        origin: 'pipeline',
        target,
        mode: p.mode,
        intervalMs: p.checkpoint.interval,
        timeoutMs: p.checkpoint.timeout,
        minPauseMs: p.checkpoint.minPause,
        tolerableFailed: p.checkpoint.tolerableFailedCheckpoints,
      },
    ],
  };
}

export function pipelineSource(p: PipelineConfig): AuditSource {
  return {
    name: `pipeline:${p.name}`,
    async gather(facts: AuditFacts) {
      const f = pipelineFacts(p);
      facts.clients.push(...f.clients);
      facts.checkpoints.push(...f.checkpoints);
      return [];
    },
  };
}
