// The subcommands of `eoswatch transactions` at work (I/O): the clients, the coordinators and the
// partition leaders read (src/coordinator/snapshot.ts), the verdict (src/coordinator/hanging.ts),
// printed through ./transactions-view.ts; src/commands/transactions.ts parses the options and calls
// these.
import type { Kafka } from 'kafkajs';
import { abortDue, findHanging, isTwoPhaseCommit } from '../coordinator/hanging.js';
import { recognise, type RecogniserOptions } from '../coordinator/applications.js';
import type { CoordinatorTransaction, PartitionProducer, SnapshotError, SnapshotPartition } from '../coordinator/snapshot.js';
import { EosError, ErrorCodes, ExitCodes } from '../errors.js';
import { holdsLso } from '../kafka/txn-log.js';
import { redactText } from '../redact.js';
import { pollUntil, PollTimeoutError } from '../runtime/poll-until.js';
import { abortRefusal, formatDuration, formatErrors, type ListRow, formatList, type DescribeView, formatDescribe, type ProducerRow, formatProducers, hangingRows, formatHanging, toJson, dash, tpName } from './transactions-view.js';
import { configFileOrDefaults, kafkaWithBrokers } from './options.js';

export type Format = 'table' | 'json';

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

// ---- running -----------------------------------------------------------------------------------

export interface Clients {
  kafka: Kafka;
  txnAdmin: import('../kafka/txn-admin.js').TxnAdmin;
  offsets: import('../kafka/offsets.js').EndOffsetReader;
  listTopics(): Promise<string[]>;
  close(): Promise<void>;
}

export async function connect(inv: TxnInvocation): Promise<{ clients: Clients; names: RecogniserOptions }> {
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


function fail(message: string): EosError {
  return new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, message);
}

export async function runList(c: Clients, names: RecogniserOptions, cmd: Extract<TxnCommand, { sub: 'list' }>, format: Format): Promise<number> {
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

export async function runDescribe(c: Clients, names: RecogniserOptions, transactionalId: string, format: Format): Promise<number> {
  const view = await describeOne(c, names, transactionalId);
  out(format === 'json' ? toJson(view) : formatDescribe(view));
  return ExitCodes.OK;
}

function holds(p: SnapshotPartition, s: PartitionProducer): boolean {
  return s.currentTransactionStartOffset >= 0 && BigInt(s.currentTransactionStartOffset) === p.lso && p.lso < p.high;
}

export async function runProducers(c: Clients, cmd: Extract<TxnCommand, { sub: 'producers' }>, format: Format): Promise<number> {
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

export async function runFindHanging(c: Clients, names: RecogniserOptions, cmd: Extract<TxnCommand, { sub: 'find-hanging' }>, format: Format): Promise<number> {
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

export async function runAbort(c: Clients, cmd: Extract<TxnCommand, { sub: 'abort' }>, format: Format): Promise<number> {
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
