// eoswatch transactions list | describe | producers | find-hanging | abort: the transactions as
// the coordinators and the partition leaders see them, whose transaction holds a partition's last
// stable offset, and ending one. The reading is src/coordinator/snapshot.ts (I/O), the verdict
// src/coordinator/hanging.ts (pure), what is printed ./transactions-view.ts (pure); this file parses
// the options and runs the subcommands.
import { checkPattern } from '../coordinator/applications.js';
import { errorMessage } from '../errors.js';
import { TRANSACTION_STATES } from '../kafka/txn-log.js';
import { connect, runAbort, runDescribe, runFindHanging, runList, runProducers, type TxnInvocation } from './transactions-run.js';
import { brokersOption, choiceOption, durationOption, numberOption, parse, printHelp, subcommand, usage } from './options.js';

export const help = `Usage: eoswatch transactions list [--state S ...] [--duration D] [options]
       eoswatch transactions describe --transactional-id ID [options]
       eoswatch transactions producers --topic T [--partition N] [options]
       eoswatch transactions find-hanging [--topic T ...] [--idle D] [options]
       eoswatch transactions abort --transactional-id ID [--force] [options]
       eoswatch transactions abort --topic T --partition N --start-offset O [--force] [options]

The transactions as the coordinators and partition leaders see them (Kafka 3.0 or later).
list          every transactional id (ListTransactions on every broker): coordinator, producer id,
              state, application, age (now - start of the open transaction) and timeout
describe      one id at its coordinator: state, producer id and epoch, timeout, start, age,
              partitions, and per partition the start offset and whether it holds the LSO
producers     DescribeProducers of a topic's partitions, with the transactional id of each
              producer's open transaction and whether it holds the partition's LSO
find-hanging  the open transaction holding each partition's last stable offset whose producer
              wrote nothing for --idle: who it is, records held back from read_committed readers,
              when the coordinator will abort it ("never" when no coordinator knows it). Exit 3
              when one is found. Kafka's kafka-transactions.sh find-hanging names only those no
              coordinator knows; a dead producer's transaction holds the LSO until start +
              transaction.timeout.ms (15 min by default) and is found here.
abort         --transactional-id: InitProducerId at the id's coordinator, as a new producer
              instance of the id would: the coordinator aborts the open transaction (writes its
              markers, ends its state) and bumps the epoch, which fences the old instance.
              --topic --partition --start-offset: WriteTxnMarkers (abort) at the partition's
              leader, as kafka-transactions.sh abort does, for a transaction no coordinator knows.
              Refused unless --force: a transaction younger than its own timeout (start + timeout
              still ahead: the coordinator will abort it, and its producer may be alive), a
              prepared (KIP-939) one, one the coordinator knows aborted by partition (it would
              still say Ongoing), one unknown to the coordinators whose producer wrote within
              --max-transaction-timeout. Prints what it did, then the state read again.

Options:
  -b, --bootstrap-server H:P   Kafka (repeatable or comma-separated); overrides the config
  -c, --config FILE            eoswatch configuration (its kafka section: brokers, TLS, SASL;
                               its pipeline's transactionalIdPrefix names eoswatch's applications)
  --format F                   table (default) or json
  --app-pattern REGEX          a regular expression with a named group "app" naming the
                               application of matching transactional ids (repeatable)
  --state S                    list: only these states (repeatable or comma-separated: Empty,
                               Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
                               CompleteAbort, Dead, PrepareEpochFence)
  --duration D                 list: only transactions running longer than D (Kafka 3.8+)
  --transactional-id ID        describe, abort
  --topic T                    producers, abort; find-hanging: repeatable (default: every
                               topic not starting with "__")
  --partition N                producers (default: every partition), abort
  --start-offset O             abort: first offset of the transaction on the partition
  --idle D                     find-hanging: producer silent for at least D (default 1m)
  --max-transaction-timeout D  abort by partition: the brokers' transaction.max.timeout.ms
                               (default 15m)
  --force                      abort even when refused (see above)
  -h, --help                   show this help

Exit codes: 0 done (find-hanging: none found), 1 a broker could not be asked (permission or
error: the answer is incomplete) or the abort was refused or failed, 2 usage or configuration
error, 3 find-hanging found a hanging transaction.
`;

const SUBS = ['list', 'describe', 'producers', 'find-hanging', 'abort'] as const;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  'bootstrap-server': { type: 'string', short: 'b', multiple: true },
  format: { type: 'string', default: 'table' },
  'app-pattern': { type: 'string', multiple: true },
  state: { type: 'string', multiple: true },
  duration: { type: 'string' },
  'transactional-id': { type: 'string' },
  topic: { type: 'string', multiple: true },
  partition: { type: 'string' },
  'start-offset': { type: 'string' },
  idle: { type: 'string' },
  'max-transaction-timeout': { type: 'string' },
  force: { type: 'boolean' },
} as const;

/** The options each subcommand takes besides the shared ones. */
const OWN: Record<(typeof SUBS)[number], readonly (keyof typeof OPTIONS)[]> = {
  list: ['state', 'duration'],
  describe: ['transactional-id'],
  producers: ['topic', 'partition'],
  'find-hanging': ['topic', 'idle'],
  abort: ['transactional-id', 'topic', 'partition', 'start-offset', 'force', 'max-transaction-timeout'],
};
const SHARED = ['config', 'bootstrap-server', 'format', 'app-pattern'];

const nonNegativeInteger = (name: string, v: string) => numberOption(name, v, NaN, (n) => Number.isSafeInteger(n) && n >= 0, 'a non-negative integer');

/** Parses `eoswatch transactions ...`; a number when the help was printed (its exit code). */
export async function parseTransactionsArgs(args: string[]): Promise<TxnInvocation | number> {
  const cmd = subcommand('transactions', args, SUBS, help);
  if (typeof cmd === 'number') return cmd;
  const { values } = parse(cmd.rest, OPTIONS);
  if (values.help) return printHelp(help);
  const given = Object.keys(values).filter((k) => values[k as keyof typeof values] !== undefined && !(k === 'format' && values.format === 'table'));
  for (const k of given) {
    if (k !== 'help' && !SHARED.includes(k) && !(OWN[cmd.sub] as readonly string[]).includes(k)) throw usage(`--${k}: not an option of transactions ${cmd.sub}`);
  }
  const format = choiceOption('format', values.format, ['table', 'json']);
  const appPatterns = (values['app-pattern'] ?? []).map((p) => {
    try {
      return checkPattern(p);
    } catch (err) {
      throw usage(`--app-pattern: ${errorMessage(err)}`);
    }
  });
  const topics = values.topic ?? [];
  const one = (what: string): string | undefined => {
    if (topics.length > 1) throw usage(`--topic: transactions ${what} takes one topic, found ${topics.length}`);
    return topics[0];
  };
  const base = { format, config: values.config, brokers: brokersOption(values['bootstrap-server']), appPatterns };
  switch (cmd.sub) {
    case 'list': {
      const states = (values.state ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
      for (const s of states) choiceOption('state', s, TRANSACTION_STATES);
      const durationMs = values.duration === undefined ? undefined : await durationOption('duration', values.duration);
      return { ...base, command: { sub: 'list', states, ...(durationMs === undefined ? {} : { durationMs }) } };
    }
    case 'describe': {
      const id = values['transactional-id'];
      if (!id) throw usage('--transactional-id is required');
      return { ...base, command: { sub: 'describe', transactionalId: id } };
    }
    case 'producers': {
      const topic = one('producers');
      if (!topic) throw usage('--topic is required');
      const partition = values.partition === undefined ? undefined : nonNegativeInteger('partition', values.partition);
      return { ...base, command: { sub: 'producers', topic, ...(partition === undefined ? {} : { partition }) } };
    }
    case 'find-hanging':
      return { ...base, command: { sub: 'find-hanging', topics: [...new Set(topics)], idleMs: values.idle === undefined ? 60_000 : await durationOption('idle', values.idle) } };
    case 'abort': {
      const id = values['transactional-id'];
      const byPartition = topics.length > 0 || values.partition !== undefined || values['start-offset'] !== undefined;
      const maxTransactionTimeoutMs = values['max-transaction-timeout'] === undefined ? 900_000 : await durationOption('max-transaction-timeout', values['max-transaction-timeout']);
      const force = Boolean(values.force);
      if (id !== undefined && byPartition) throw usage('abort: either --transactional-id, or --topic, --partition and --start-offset, not both');
      if (id !== undefined) {
        if (!id) throw usage('--transactional-id: expected an id, found ""');
        return { ...base, command: { sub: 'abort', target: { kind: 'transactional-id', transactionalId: id }, force, maxTransactionTimeoutMs } };
      }
      if (!byPartition) throw usage('abort: --transactional-id ID, or --topic T --partition N --start-offset O, is required');
      const topic = one('abort');
      if (!topic) throw usage('--topic is required with --partition and --start-offset');
      if (values.partition === undefined) throw usage('--partition is required with --topic');
      if (values['start-offset'] === undefined) throw usage('--start-offset is required with --topic (the first offset of the transaction: transactions find-hanging or producers shows it)');
      if (!/^\d+$/.test(values['start-offset'])) throw usage(`--start-offset: expected a non-negative integer, found "${values['start-offset']}"`);
      return {
        ...base,
        command: { sub: 'abort', target: { kind: 'partition', topic, partition: nonNegativeInteger('partition', values.partition), startOffset: BigInt(values['start-offset']) }, force, maxTransactionTimeoutMs },
      };
    }
  }
}

export async function handler(args: string[]): Promise<number> {
  const inv = await parseTransactionsArgs(args);
  if (typeof inv === 'number') return inv;
  const { clients, names } = await connect(inv);
  try {
    switch (inv.command.sub) {
      case 'list':
        return await runList(clients, names, inv.command, inv.format);
      case 'describe':
        return await runDescribe(clients, names, inv.command.transactionalId, inv.format);
      case 'producers':
        return await runProducers(clients, inv.command, inv.format);
      case 'find-hanging':
        return await runFindHanging(clients, names, inv.command, inv.format);
      case 'abort':
        return await runAbort(clients, inv.command, inv.format);
    }
  } finally {
    await clients.close();
  }
}
