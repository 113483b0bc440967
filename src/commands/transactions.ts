// eoswatch transactions list | describe | producers | find-hanging | abort: the transactions as
// the coordinators and the partition leaders see them, whose transaction holds a partition's last
// stable offset, and ending one. The reading is src/coordinator/snapshot.ts (I/O), the verdict
// src/coordinator/hanging.ts (pure); this file parses options, formats (pure, exported for the
// unit tests) and runs the subcommands.
import type { Kafka } from 'kafkajs';
import { abortDue, findHanging, isTwoPhaseCommit, type HangingTransaction, type TopicPartition } from '../coordinator/hanging.js';
import { checkPattern, recognise, type RecogniserOptions } from '../coordinator/applications.js';
import type { CoordinatorTransaction, PartitionProducer, SnapshotError, SnapshotPartition } from '../coordinator/snapshot.js';
import { EosError, ErrorCodes, ExitCodes, errorMessage } from '../errors.js';
import { TRANSACTION_STATES, holdsLso } from '../kafka/txn-log.js';
import { redactText, redactValue } from '../redact.js';
import { pollUntil, PollTimeoutError } from '../runtime/poll-until.js';
import { brokersOption, choiceOption, configFileOrDefaults, durationOption, kafkaWithBrokers, numberOption, parse, printHelp, subcommand, usage } from './options.js';

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
type Format = 'table' | 'json';

export type TxnCommand =
  | { sub: 'list'; states: string[]; durationMs?: number }
  | { sub: 'describe'; transactionalId: string }
  | { sub: 'producers'; topic: string; partition?: number }
  | { sub: 'find-hanging'; topics: string[]; idleMs: number }
  | {
      sub: 'abort';
      target: { kind: 'transactional-id'; transactionalId: string } | { kind: 'partition'; topic: string; partition: number; startOffset: bigint };
      force: boolean;
      maxTransactionTimeoutMs: number;
    };

export interface TxnInvocation {
  command: TxnCommand;
  format: Format;
  config?: string;
  brokers: string[];
  appPatterns: RegExp[];
}

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

// ---- the abort rule (pure) ---------------------------------------------------------------------

export type AbortCase =
  | {
      kind: 'known';
      /** How the abort would be done: InitProducerId (transactional-id) or WriteTxnMarkers (partition). */
      via: 'transactional-id' | 'partition';
      transactionalId: string;
      state: string;
      startTimestampMs: number;
      transactionTimeoutMs: number;
      prepared?: boolean;
    }
  | { kind: 'unknown'; lastTimestampMs: number; maxTransactionTimeoutMs: number; coordinatorsComplete: boolean };

/** Why an abort is refused without --force, or null when it may go ahead. */
export function abortRefusal(c: AbortCase, now: number): string | null {
  if (c.kind === 'known') {
    if (c.via === 'partition') {
      return `the coordinator knows this transaction (transactional id ${c.transactionalId}, ${c.state}): markers written by partition would leave it saying ${c.state}; abort it with --transactional-id ${c.transactionalId}`;
    }
    if (c.prepared) return `${c.transactionalId} is a prepared (KIP-939) transaction: its external transaction manager decides it, and the coordinator never aborts it`;
    if (c.state === 'Ongoing' && c.startTimestampMs >= 0) {
      const due = c.startTimestampMs + c.transactionTimeoutMs;
      if (due > now) {
        return `${c.transactionalId}'s transaction started ${formatDuration(now - c.startTimestampMs)} ago, within its transaction timeout (${formatDuration(c.transactionTimeoutMs)}): its producer may be alive, and the coordinator aborts it itself in ${formatDuration(due - now)}`;
      }
    }
    return null;
  }
  if (!c.coordinatorsComplete) return 'not every coordinator answered (see the errors): cannot tell that no coordinator knows this transaction';
  const idle = now - c.lastTimestampMs;
  if (idle < c.maxTransactionTimeoutMs) {
    return `its producer wrote to the partition ${formatDuration(Math.max(0, idle))} ago, within the longest transaction timeout the brokers allow (${formatDuration(c.maxTransactionTimeoutMs)}): it may be a live transaction the coordinators were not asked about in time; it would be due in ${formatDuration(c.maxTransactionTimeoutMs - idle)}`;
  }
  return null;
}

// ---- formatting (pure) -------------------------------------------------------------------------

/** "850ms", "12s", "4m 12s", "2h 5m", "3d 4h". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Left-aligned columns, two spaces apart (values never wrap). */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

const tpName = (t: TopicPartition): string => `${t.topic}-${t.partition}`;
const dash = (v: string | number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));

export function formatErrors(errors: readonly SnapshotError[]): string {
  return errors.map((e) => `! ${e.source} ${e.target}: ${e.error.name}${e.error.kind === 'permission' ? ' (permission: an ACL is missing)' : ''}${e.error.message && e.error.message !== e.error.name ? `: ${e.error.message}` : ''}\n`).join('');
}

export interface ListRow {
  transactionalId: string;
  coordinatorId: number;
  producerId: number;
  state: string;
  application: string;
  engine: string;
  /** Of the open transaction; null when none is open or the description failed. */
  startTimestampMs: number | null;
  ageMs: number | null;
  transactionTimeoutMs: number | null;
}

export function formatList(rows: readonly ListRow[]): string {
  if (rows.length === 0) return 'no transactional ids\n';
  return formatTable(
    ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState', 'Application', 'Age', 'Timeout'],
    rows.map((r) => [r.transactionalId, String(r.coordinatorId), String(r.producerId), r.state, r.application, r.ageMs === null ? '-' : formatDuration(r.ageMs), r.transactionTimeoutMs === null ? '-' : formatDuration(r.transactionTimeoutMs)]),
  );
}

export interface DescribedPartition extends TopicPartition {
  high: bigint | null;
  lso: bigint | null;
  /** The transaction's first offset on the partition (DescribeProducers); null when not known. */
  startOffset: bigint | null;
  holdsLso: boolean;
}

export interface DescribeView {
  transactionalId: string;
  application: string;
  engine: string;
  coordinatorId: number | null;
  state: string;
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  startTimestampMs: number | null;
  ageMs: number | null;
  abortDue: string | null;
  partitions: DescribedPartition[];
}

export function formatDescribe(d: DescribeView): string {
  const kv: [string, string][] = [
    ['TransactionalId', d.transactionalId],
    ['Application', `${d.application} (${d.engine})`],
    ['Coordinator', dash(d.coordinatorId)],
    ['State', d.state],
    ['ProducerId', String(d.producerId)],
    ['ProducerEpoch', String(d.producerEpoch)],
    ['Timeout', `${formatDuration(d.transactionTimeoutMs)} (${d.transactionTimeoutMs} ms)`],
    ['StartTime', d.startTimestampMs === null ? '-' : `${new Date(d.startTimestampMs).toISOString()} (${d.startTimestampMs})`],
    ['Age', d.ageMs === null ? '-' : formatDuration(d.ageMs)],
    ['CoordinatorAborts', d.abortDue ?? '-'],
  ];
  const w = Math.max(...kv.map(([k]) => k.length));
  const head = kv.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
  if (d.partitions.length === 0) return `${head}\n${'Partitions'.padEnd(w)}  -\n`;
  return `${head}\n\n${formatTable(
    ['Partition', 'StartOffset', 'HoldsLso', 'LastStableOffset', 'HighWatermark'],
    d.partitions.map((p) => [tpName(p), dash(p.startOffset?.toString()), p.holdsLso ? 'yes' : 'no', dash(p.lso?.toString()), dash(p.high?.toString())]),
  )}`;
}

export interface ProducerRow extends TopicPartition, PartitionProducer {
  transactionalId: string | null;
  holdsLso: boolean;
}

export function formatProducers(rows: readonly ProducerRow[]): string {
  if (rows.length === 0) return 'no active producers\n';
  return formatTable(
    ['Partition', 'ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset', 'TransactionalId', 'HoldsLso'],
    rows.map((r) => [
      tpName(r),
      String(r.producerId),
      String(r.producerEpoch),
      String(r.coordinatorEpoch),
      String(r.lastSequence),
      String(r.lastTimestampMs),
      r.currentTransactionStartOffset === -1 ? 'None' : String(r.currentTransactionStartOffset),
      dash(r.transactionalId),
      r.holdsLso ? 'yes' : 'no',
    ]),
  );
}

export interface HangingRow {
  transactionalId: string | null;
  application: string | null;
  producerId: number;
  producerEpoch: number;
  topic: string;
  partition: number;
  startOffset: number;
  ageMs: number;
  idleMs: number;
  heldBack: number;
  abortAtMs: number | null;
  abortDue: string;
  kind: string;
  /** False when the finding rests on a coordinator view with gaps (unknown-to-coordinator while a coordinator did not answer). */
  certain: boolean;
  partitions: string[];
}

export function hangingRows(found: readonly HangingTransaction[], now: number, names: RecogniserOptions, coordinatorsComplete: boolean): HangingRow[] {
  return found.map((h) => ({
    transactionalId: h.transactionalId,
    application: h.transactionalId === null ? null : recognise(h.transactionalId, names).application,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    topic: h.topic,
    partition: h.partition,
    startOffset: Number(h.startOffset),
    ageMs: h.ageMs,
    idleMs: h.idleMs,
    heldBack: Number(h.heldBack),
    abortAtMs: h.abortAtMs,
    abortDue: abortDue(h, now),
    kind: h.kind,
    certain: h.kind !== 'unknown-to-coordinator' || coordinatorsComplete,
    partitions: h.partitions.map(tpName),
  }));
}

export function formatHanging(rows: readonly HangingRow[], read: { partitions: number; topics: number; held: number }): string {
  if (rows.length === 0) {
    return `no hanging transaction (${read.partitions} partitions of ${read.topics} topics read; ${read.held} held back by an open transaction whose producer is still writing)\n`;
  }
  const table = formatTable(
    ['TransactionalId', 'Application', 'ProducerId', 'Epoch', 'Partition', 'StartOffset', 'Age', 'HeldBack', 'AbortDue', 'Kind', 'Partitions'],
    rows.map((r) => [
      dash(r.transactionalId),
      dash(r.application),
      String(r.producerId),
      String(r.producerEpoch),
      `${r.topic}-${r.partition}`,
      String(r.startOffset),
      formatDuration(r.ageMs),
      String(r.heldBack),
      r.abortDue,
      r.certain ? r.kind : `${r.kind}?`,
      r.partitions.join(','),
    ]),
  );
  const uncertain = rows.some((r) => !r.certain) ? 'kind ending in ?: a coordinator did not answer, so "unknown to every coordinator" is not certain\n' : '';
  return `${table}${uncertain}`;
}

/** JSON with bigints as numbers (offsets stay far below 2^53), through the redaction path. */
export function toJson(value: unknown): string {
  const plain = JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as unknown;
  return `${JSON.stringify(redactValue(plain), null, 2)}\n`;
}

// ---- running -----------------------------------------------------------------------------------

interface Clients {
  kafka: Kafka;
  txnAdmin: import('../kafka/txn-admin.js').TxnAdmin;
  offsets: import('../kafka/offsets.js').EndOffsetReader;
  listTopics(): Promise<string[]>;
  close(): Promise<void>;
}

async function connect(inv: TxnInvocation): Promise<{ clients: Clients; names: RecogniserOptions }> {
  const base = await configFileOrDefaults(inv.config);
  const { createKafka } = await import('../kafka/client.js');
  const { createLogger } = await import('../log.js');
  const { TxnAdmin } = await import('../kafka/txn-admin.js');
  const { EndOffsetReader } = await import('../kafka/offsets.js');
  const kafka = createKafka(kafkaWithBrokers(base.kafka, inv.brokers), createLogger('silent'));
  const txnAdmin = new TxnAdmin(kafka);
  const offsets = new EndOffsetReader(kafka);
  const admin = kafka.admin();
  let adminConnected = false;
  const clients: Clients = {
    kafka,
    txnAdmin,
    offsets,
    async listTopics() {
      if (!adminConnected) {
        await admin.connect();
        adminConnected = true;
      }
      return admin.listTopics();
    },
    async close() {
      await Promise.all([txnAdmin.close(), offsets.close(), adminConnected ? admin.disconnect().catch(() => undefined) : undefined]);
    },
  };
  return { clients, names: { patterns: inv.appPatterns, eoswatchPrefixes: inv.config ? [base.pipeline.transactionalIdPrefix] : [] } };
}

/** Output text goes through the redaction path. */
const out = (text: string) => process.stdout.write(redactText(text));

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

function fail(message: string): EosError {
  return new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, message);
}

async function runList(c: Clients, names: RecogniserOptions, cmd: Extract<TxnCommand, { sub: 'list' }>, format: Format): Promise<number> {
  const brokers = await c.txnAdmin.listTransactions({ ...(cmd.states.length ? { states: cmd.states } : {}), ...(cmd.durationMs === undefined ? {} : { durationMs: cmd.durationMs }) });
  const errors: SnapshotError[] = brokers.flatMap((b) => (b.error ? [{ source: 'ListTransactions' as const, target: `broker ${b.nodeId}`, error: b.error }] : []));
  const listed = brokers.flatMap((b) => b.transactions.map((t) => ({ ...t, coordinatorId: b.nodeId })));
  const described = listed.length ? await c.txnAdmin.describeTransactions(listed.map((t) => t.transactionalId)) : new Map();
  const now = Date.now();
  const rows: ListRow[] = listed.map((t) => {
    const d = described.get(t.transactionalId);
    if (d?.error) errors.push({ source: 'DescribeTransactions', target: t.transactionalId, error: d.error });
    const desc = d?.description ?? null;
    const open = desc !== null && desc.transactionStartTimeMs >= 0 && holdsLso(desc.state);
    const app = recognise(t.transactionalId, names);
    return {
      transactionalId: t.transactionalId,
      coordinatorId: t.coordinatorId,
      producerId: t.producerId,
      state: t.state,
      application: app.application,
      engine: app.engine,
      startTimestampMs: open ? desc.transactionStartTimeMs : null,
      ageMs: open ? Math.max(0, now - desc.transactionStartTimeMs) : null,
      transactionTimeoutMs: desc?.transactionTimeoutMs ?? null,
    };
  });
  rows.sort((a, b) => a.transactionalId.localeCompare(b.transactionalId));
  const unknownStates = [...new Set(brokers.flatMap((b) => b.unknownStateFilters))];
  if (format === 'json') out(toJson({ transactions: rows, unknownStateFilters: unknownStates, errors }));
  else out(formatList(rows) + (unknownStates.length ? `unknown to the brokers: ${unknownStates.join(', ')}\n` : '') + formatErrors(errors));
  return errors.length ? ExitCodes.RUNTIME : ExitCodes.OK;
}

async function describeOne(c: Clients, names: RecogniserOptions, transactionalId: string): Promise<DescribeView> {
  const d = (await c.txnAdmin.describeTransactions([transactionalId])).get(transactionalId)!;
  if (d.error || !d.description) {
    const e = d.error!;
    throw fail(`DescribeTransactions ${transactionalId}${d.coordinatorId === null ? '' : ` at coordinator ${d.coordinatorId}`}: ${e.name}${e.kind === 'permission' ? ' (permission: an ACL is missing)' : ''}${e.message !== e.name ? `: ${e.message}` : ''}`);
  }
  const t = d.description;
  const now = Date.now();
  const open = t.transactionStartTimeMs >= 0 && holdsLso(t.state);
  const tps = t.topics.flatMap((x) => x.partitions.map((partition) => ({ topic: x.topic, partition })));
  const { readPartitions } = await import('../coordinator/snapshot.js');
  const wanted = new Set(tps.map(tpName));
  const { partitions } = await readPartitions(c, [...new Set(tps.map((p) => p.topic))], (p) => wanted.has(tpName(p)));
  const byTp = new Map(partitions.map((p) => [tpName(p), p]));
  const app = recognise(transactionalId, names);
  return {
    transactionalId,
    application: app.application,
    engine: app.engine,
    coordinatorId: d.coordinatorId,
    state: t.state,
    producerId: t.producerId,
    producerEpoch: t.producerEpoch,
    transactionTimeoutMs: t.transactionTimeoutMs,
    startTimestampMs: open ? t.transactionStartTimeMs : null,
    ageMs: open ? Math.max(0, now - t.transactionStartTimeMs) : null,
    abortDue: t.state === 'Ongoing' && open ? abortDue({ abortAtMs: isTwoPhaseCommit(t.transactionTimeoutMs) ? null : t.transactionStartTimeMs + t.transactionTimeoutMs }, now) : null,
    partitions: tps
      .map((tp) => {
        const v = byTp.get(tpName(tp));
        const mine = v?.producers.find((s) => s.producerId === t.producerId && s.currentTransactionStartOffset >= 0);
        const startOffset = mine ? BigInt(mine.currentTransactionStartOffset) : null;
        return { ...tp, high: v?.high ?? null, lso: v?.lso ?? null, startOffset, holdsLso: v !== undefined && startOffset !== null && startOffset === v.lso && v.lso < v.high };
      })
      .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition),
  };
}

async function runDescribe(c: Clients, names: RecogniserOptions, transactionalId: string, format: Format): Promise<number> {
  const view = await describeOne(c, names, transactionalId);
  out(format === 'json' ? toJson(view) : formatDescribe(view));
  return ExitCodes.OK;
}

function holds(p: SnapshotPartition, s: PartitionProducer): boolean {
  return s.currentTransactionStartOffset >= 0 && BigInt(s.currentTransactionStartOffset) === p.lso && p.lso < p.high;
}

async function runProducers(c: Clients, cmd: Extract<TxnCommand, { sub: 'producers' }>, format: Format): Promise<number> {
  const { readOpenTransactions, readPartitions, resolveTopics } = await import('../coordinator/snapshot.js');
  const resolved = await resolveTopics(() => c.listTopics(), [cmd.topic]);
  if (resolved.topics.length === 0) throw fail(formatErrors(resolved.errors).replace(/^! |\n$/g, ''));
  const coordinators = await readOpenTransactions(c.txnAdmin);
  const read = await readPartitions(c, [cmd.topic], (p) => cmd.partition === undefined || p.partition === cmd.partition);
  const views = read.partitions.filter((p) => cmd.partition === undefined || p.partition === cmd.partition);
  if (cmd.partition !== undefined && views.length === 0) throw new EosError(ErrorCodes.USAGE, `--partition: topic ${cmd.topic} has no partition ${cmd.partition}`);
  const byProducer = new Map(coordinators.open.map((t) => [t.producerId, t]));
  const rows: ProducerRow[] = views.flatMap((p) =>
    p.producers.map((s) => ({ topic: p.topic, partition: p.partition, ...s, transactionalId: s.currentTransactionStartOffset >= 0 ? (byProducer.get(s.producerId)?.transactionalId ?? null) : null, holdsLso: holds(p, s) })),
  );
  const errors = [...coordinators.errors, ...read.errors];
  if (format === 'json') out(toJson({ producers: rows, partitions: views.map(({ producers: _p, ...v }) => v), errors }));
  else out(formatProducers(rows) + formatErrors(errors));
  return errors.length ? ExitCodes.RUNTIME : ExitCodes.OK;
}

async function runFindHanging(c: Clients, names: RecogniserOptions, cmd: Extract<TxnCommand, { sub: 'find-hanging' }>, format: Format): Promise<number> {
  const { takeSnapshot } = await import('../coordinator/snapshot.js');
  const snap = await takeSnapshot(c, { topics: cmd.topics });
  const found = findHanging(snap.partitions, snap.open, snap.takenAtMs, cmd.idleMs);
  const rows = hangingRows(found, snap.takenAtMs, names, snap.coordinatorsComplete);
  const held = snap.partitions.filter((p) => p.lso < p.high).length - rows.length;
  if (format === 'json') {
    out(toJson({ takenAtMs: snap.takenAtMs, idleMs: cmd.idleMs, topics: snap.topics, hanging: rows, coordinatorsComplete: snap.coordinatorsComplete, errors: snap.errors }));
  } else {
    out(formatHanging(rows, { partitions: snap.partitions.length, topics: snap.topics.length, held }) + formatErrors(snap.errors));
  }
  if (rows.some((r) => r.certain)) return ExitCodes.VIOLATION;
  return snap.errors.length || rows.length ? ExitCodes.RUNTIME : ExitCodes.OK;
}

/** Polls `read` (pollUntil) until `done` holds or `timeoutMs` passed; the last reading either way (a failed last reading throws). */
async function lastReading<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number): Promise<T> {
  return pollUntil(what, read, { timeoutMs, done }).catch((err: unknown) => {
    if (err instanceof PollTimeoutError && err.last.kind === 'value') return err.last.value as T;
    throw err;
  });
}

async function runAbort(c: Clients, cmd: Extract<TxnCommand, { sub: 'abort' }>, format: Format): Promise<number> {
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    if (format === 'table') out(`${l}\n`);
  };
  const report: Record<string, unknown> = { target: cmd.target, force: cmd.force };
  const finish = (code: number) => {
    if (format === 'json') out(toJson({ ...report, log: lines, exitCode: code }));
    return code;
  };
  const refuse = (why: string) => {
    report.refused = why;
    if (format === 'table') process.stderr.write(redactText(`eoswatch: refused: ${why}; --force to abort anyway\n`));
    return finish(ExitCodes.RUNTIME);
  };
  if (cmd.target.kind === 'transactional-id') {
    const id = cmd.target.transactionalId;
    const before = await describeOne(c, {}, id);
    report.before = before;
    if (!holdsLso(before.state)) {
      say(`${id} has no open transaction (state ${before.state}): nothing to abort`);
      return finish(ExitCodes.OK);
    }
    const why = abortRefusal({ kind: 'known', via: 'transactional-id', transactionalId: id, state: before.state, startTimestampMs: before.startTimestampMs ?? -1, transactionTimeoutMs: before.transactionTimeoutMs }, Date.now());
    if (why && !cmd.force) return refuse(why);
    say(
      `aborting ${id}: producer id ${before.producerId} epoch ${before.producerEpoch}, ${before.state}${before.ageMs === null ? '' : ` for ${formatDuration(before.ageMs)}`}, partitions ${before.partitions.map(tpName).join(',') || '-'}`,
    );
    say(`InitProducerId for ${id} at coordinator ${dash(before.coordinatorId)}, as a new producer instance would (the old instance is fenced)`);
    // The time txn-admin may retry CONCURRENT_TRANSACTIONS until (the coordinator writing the markers).
    const res = await c.txnAdmin.initProducerId(id, before.transactionTimeoutMs, Date.now() + 60_000);
    report.initProducerId = res;
    if (res.error) throw fail(`InitProducerId ${id}: ${res.error.name}${res.error.kind === 'permission' ? ' (permission: an ACL is missing)' : ''}${res.error.message !== res.error.name ? `: ${res.error.message}` : ''}`);
    say(`the coordinator ended the transaction${res.concurrentRetries ? ` (answered CONCURRENT_TRANSACTIONS ${res.concurrentRetries} times while it wrote the markers)` : ''}; producer id ${res.producerId} epoch ${res.producerEpoch} now`);
    // Read again: the coordinator's state, and the transaction's partitions (an ended one lists none).
    const { readPartitions } = await import('../coordinator/snapshot.js');
    const wanted = new Set(before.partitions.map(tpName));
    const reread = async () => ({
      d: await describeOne(c, {}, id),
      parts: (await readPartitions(c, [...new Set(before.partitions.map((p) => p.topic))], (p) => wanted.has(tpName(p)))).partitions.filter((p) => wanted.has(tpName(p))),
    });
    const still = (v: Awaited<ReturnType<typeof reread>>) => v.parts.some((p) => p.producers.some((s) => s.producerId === before.producerId && holds(p, s)));
    const after = await lastReading(`${id} ended and its partitions released`, reread, (v) => !holdsLso(v.d.state) && !still(v), 30_000);
    report.after = { ...after.d, partitions: after.parts.map(({ producers: _p, ...v }) => v) };
    say(`coordinator: ${id} is ${after.d.state} (was ${before.state})`);
    for (const p of before.partitions) {
      const a = after.parts.find((x) => x.topic === p.topic && x.partition === p.partition);
      say(`${tpName(p)}: last stable offset ${dash(p.lso?.toString())} -> ${dash(a?.lso?.toString())} (high watermark ${dash(a?.high?.toString())})`);
    }
    return finish(holdsLso(after.d.state) || still(after) ? ExitCodes.RUNTIME : ExitCodes.OK);
  }
  const { topic, partition, startOffset } = cmd.target;
  const { readOpenTransactions, readPartitions, resolveTopics } = await import('../coordinator/snapshot.js');
  const resolved = await resolveTopics(() => c.listTopics(), [topic]);
  if (resolved.topics.length === 0) throw fail(formatErrors(resolved.errors).replace(/^! |\n$/g, ''));
  const coordinators = await readOpenTransactions(c.txnAdmin);
  const readOne = async () => (await readPartitions(c, [topic], (p) => p.partition === partition)).partitions.find((p) => p.partition === partition);
  const view = await readOne();
  if (!view) throw new EosError(ErrorCodes.USAGE, `--partition: topic ${topic} has no partition ${partition}`);
  const holder = view.producers.find((s) => s.currentTransactionStartOffset >= 0 && BigInt(s.currentTransactionStartOffset) === startOffset);
  if (!holder) {
    const open = view.producers.filter((s) => s.currentTransactionStartOffset >= 0).map((s) => `producer ${s.producerId} from ${s.currentTransactionStartOffset}`);
    throw fail(`no open transaction starts at offset ${startOffset} on ${topic}-${partition} (open there: ${open.join(', ') || 'none'})`);
  }
  report.before = { lso: view.lso, high: view.high, producer: holder };
  const known: CoordinatorTransaction | undefined = coordinators.open.find((t) => t.producerId === holder.producerId);
  const now = Date.now();
  const why = known
    ? abortRefusal({ kind: 'known', via: 'partition', transactionalId: known.transactionalId, state: known.state, startTimestampMs: known.startTimestampMs, transactionTimeoutMs: known.transactionTimeoutMs }, now)
    : abortRefusal({ kind: 'unknown', lastTimestampMs: holder.lastTimestampMs, maxTransactionTimeoutMs: cmd.maxTransactionTimeoutMs, coordinatorsComplete: coordinators.complete }, now);
  if (why && !cmd.force) {
    if (format === 'table') process.stderr.write(redactText(formatErrors(coordinators.errors)));
    return refuse(why);
  }
  const coordinatorEpoch = Math.max(0, holder.coordinatorEpoch);
  say(`aborting the transaction of producer ${holder.producerId} epoch ${holder.producerEpoch} on ${topic}-${partition} from offset ${startOffset} (last write ${formatDuration(now - holder.lastTimestampMs)} ago${known ? `; the coordinator knows it as ${known.transactionalId}, ${known.state}` : ', unknown to every coordinator'})`);
  const res = await c.txnAdmin.writeAbortMarker(topic, partition, { producerId: holder.producerId, producerEpoch: holder.producerEpoch, coordinatorEpoch });
  report.writeTxnMarkers = { ...res, coordinatorEpoch };
  if (res.error) throw fail(`WriteTxnMarkers ${topic}-${partition} at leader ${dash(res.leaderId)}: ${res.error.name}${res.error.kind === 'permission' ? ' (permission: ClusterAction on the cluster is needed)' : ''}${res.error.message !== res.error.name ? `: ${res.error.message}` : ''}`);
  say(`WriteTxnMarkers (abort, coordinator epoch ${coordinatorEpoch}) written at leader ${dash(res.leaderId)}`);
  const after = await lastReading(`the last stable offset of ${topic}-${partition} moved`, readOne, (v) => v !== undefined && v.lso !== view.lso, 30_000);
  report.after = after ? { lso: after.lso, high: after.high } : null;
  say(`${topic}-${partition}: last stable offset ${view.lso} -> ${dash(after?.lso.toString())} (high watermark ${dash(after?.high.toString())})`);
  return finish(after && after.lso !== view.lso ? ExitCodes.OK : ExitCodes.RUNTIME);
}
