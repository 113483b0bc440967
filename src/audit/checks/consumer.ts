// Consumer-side exactly-once settings: what the reader of a transactional topic sees, and what
// it does when it has no position.
import type { Check, CheckResult, ClientFacts } from '../types.js';
import { setting } from './producer.js';
import { perClient } from './util.js';

const perConsumer = (evaluate: (c: ClientFacts) => Omit<CheckResult, 'target'>) => perClient('consumer', evaluate);

const isolationLevel: Check = {
  id: 'consumer.isolation-level',
  title: 'Consumer reads only committed records',
  severity: 'critical',
  rationale:
    'The default read_uncommitted returns records of open and aborted transactions: every checkpoint that fails and aborts still reaches the reader, ' +
    'and after the retry the same records arrive a second time.',
  remediation: 'Set isolation.level=read_committed.',
  evaluate: perConsumer((c) => {
    const v = setting(c, 'isolation.level');
    const expected = 'isolation.level=read_committed';
    return v === undefined
      ? { passed: false, observed: 'isolation.level unset (default read_uncommitted)', expected }
      : { passed: v.toLowerCase() === 'read_committed', observed: `isolation.level=${v}`, expected };
  }),
};

// `earliest` fails too, under the same critical severity: it does not lose data, but it
// re-reads the whole retained log and writes its output again (duplicates), and like `latest` it
// hides the lost position instead of stopping. Bootstrapping a new group is a one-off decision
// (seek explicitly, or a tool such as kafka-consumer-groups --reset-offsets), not a standing reset.
const autoOffsetReset: Check = {
  id: 'consumer.auto-offset-reset',
  title: 'Consumer stops when it has no committed offset',
  severity: 'critical',
  rationale:
    'When the committed offset is missing (new group id, offsets expired, state lost) the default latest silently skips everything not yet read: permanent loss. ' +
    'earliest re-reads the retained log and duplicates its output. none raises NoOffsetForPartitionException, so the job fails visibly instead.',
  remediation:
    'Set auto.offset.reset=none and bootstrap a new consumer group explicitly (kafka-consumer-groups --reset-offsets, or an explicit seek) once.',
  evaluate: perConsumer((c) => {
    const v = setting(c, 'auto.offset.reset');
    const expected = 'auto.offset.reset=none';
    if (v === undefined) return { passed: false, observed: 'auto.offset.reset unset (default latest: skips unread records)', expected };
    const value = v.toLowerCase();
    const effect =
      value === 'latest' ? ' (skips unread records)'
      : value === 'earliest' ? ' (re-reads the retained log: duplicates)'
      : '';
    if (c.file.startsWith('pipeline:')) {
      return {
        passed: value === 'none',
        observed: `pipeline.startFrom: ${v}${effect}`,
        expected: 'pipeline.startFrom: none',
        remediation:
          'Set pipeline.startFrom: none. To bootstrap partitions that have no committed offset yet, run once with `eoswatch run --start-from earliest` ' +
          '(or latest); `eoswatch topics create` commits the start of the topics it creates, so a new pipeline needs neither.',
      };
    }
    return { passed: value === 'none', observed: `auto.offset.reset=${v}${effect}`, expected };
  }),
};

const enableAutoCommit: Check = {
  id: 'consumer.enable-auto-commit',
  title: 'Consumer offsets are not auto-committed',
  severity: 'critical',
  rationale:
    'Auto-commit commits offsets on a timer, independently of the output: after a crash, records whose offsets were committed but whose output was not are lost. ' +
    'Exactly-once commits offsets inside the producer transaction (sendOffsetsToTransaction) or in the checkpoint.',
  remediation: 'Set enable.auto.commit=false and commit offsets with the transaction or the checkpoint.',
  evaluate: perConsumer((c) => {
    const v = setting(c, 'enable.auto.commit');
    const expected = 'enable.auto.commit=false';
    return v === undefined
      ? { passed: false, observed: 'enable.auto.commit unset (default true)', expected }
      : { passed: v.toLowerCase() === 'false', observed: `enable.auto.commit=${v}`, expected };
  }),
};

export const consumerChecks: Check[] = [isolationLevel, autoOffsetReset, enableAutoCommit];
