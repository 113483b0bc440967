// The cluster's live state (not its configuration): replicas actually in sync right now.
import type { Check, CheckResult } from '../types.js';
import { intOf } from './util.js';

export const liveChecks: Check[] = [
  {
    id: 'live.transaction-state-isr',
    title: '__transaction_state partitions have at least min ISR replicas in sync',
    severity: 'critical',
    rationale: 'A transaction log partition below transaction.state.log.min.isr rejects writes: every producer whose transactional id maps there cannot begin, commit or abort, and read_committed consumers stall behind its open transactions.',
    remediation: 'Bring the missing brokers back (or reassign the partitions); check broker logs for why followers fell out of sync.',
    evaluate: (f) => {
      const t = f.cluster?.topics.find((x) => x.name === '__transaction_state');
      if (!t) return [];
      const minIsr = Math.max(1, ...(f.cluster?.brokers ?? []).map((b) => intOf(b.configs.get('transaction.state.log.min.isr')) ?? 1));
      const short = t.partitions.filter((p) => p.isr.length < minIsr);
      return [
        {
          target: 'topic:__transaction_state',
          passed: short.length === 0,
          observed: short.length
            ? `${short.length} of ${t.partitions.length} partitions below min ISR ${minIsr}: ${short.slice(0, 10).map((p) => `${p.partition} (isr ${p.isr.length}/${p.replicas.length})`).join(', ')}`
            : `all ${t.partitions.length} partitions have >= ${minIsr} in-sync replicas`,
          expected: `in-sync replicas >= ${minIsr} on every partition`,
        },
      ];
    },
  },
  {
    id: 'live.under-replicated',
    title: 'Source and sink partitions fully replicated',
    severity: 'warning',
    rationale: 'An under-replicated partition has fewer copies of committed data than configured: one more failure can make it unavailable or, with unclean election, lose data.',
    remediation: 'Find why followers fall behind (broker down, disk, network, replica.lag.time.max.ms) and restore them.',
    evaluate: (f) =>
      (f.cluster?.topics ?? [])
        .filter((t) => !t.roles.includes('internal'))
        .map((t): CheckResult => {
          const under = t.partitions.filter((p) => p.isr.length < p.replicas.length);
          return {
            target: `topic:${t.name}`,
            passed: under.length === 0,
            observed: under.length ? `under-replicated partitions: ${under.slice(0, 10).map((p) => `${p.partition} (isr ${p.isr.length}/${p.replicas.length})`).join(', ')}` : 'all partitions fully in sync',
            expected: 'isr = replicas on every partition',
          };
        }),
  },
];
