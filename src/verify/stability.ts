// When a sink may be judged: every transaction that wrote below the end a read takes must be
// decided first, or a read_committed read stops short of committed records and calls them lost.
//
// "Caught up" (the group's committed offsets at the end of the source) is no such moment: the
// transaction coordinator writes the COMMIT marker to the __consumer_offsets partition and to each
// sink partition independently, so the offsets can be visible while a sink partition's marker is
// not yet written (or not yet replicated), and that partition's last stable offset (LSO) still
// stands at the transaction's first record. A read that took its end from the LSO then (kafkajs'
// admin.fetchTopicOffsets asks ListOffsets with READ_COMMITTED, the protocol default, and answers
// the LSO, not the high watermark) finished at once with nothing read: CI's "200 lost", every
// record of one input partition (test/repro/dlq-race.ts reproduces it under CPU load).
//
// The rule: take the high watermark (HW) of every partition when the read starts, and read only
// once each partition's LSO has reached it (no transaction that began below it is still open);
// then read read_committed up to that HW. Pure: the readings and the time come from the caller
// (src/verify/reader.ts, waitSinkStable).

/** One partition's reading: its high watermark and last stable offset. */
export interface EndsReading {
  partition: number;
  high: bigint;
  lso: bigint;
}

/** A partition whose LSO has not reached the HW taken when the read started. */
export interface UnstablePartition {
  partition: number;
  lso: bigint;
  /** The HW taken when the read started: the end the read will go to. */
  target: bigint;
}

/** The ends a read goes to: each partition's HW when the read started. */
export function targetsOf(first: EndsReading[]): Map<number, bigint> {
  return new Map(first.map((e) => [e.partition, e.high]));
}

/**
 * The partitions of `targets` whose LSO in `now` is below their target, by partition. A partition
 * missing from `now` is unstable (its LSO is unknown); one reading an LSO past its target is stable.
 */
export function unstablePartitions(targets: Map<number, bigint>, now: EndsReading[]): UnstablePartition[] {
  const lso = new Map(now.map((e) => [e.partition, e.lso]));
  const out: UnstablePartition[] = [];
  for (const [partition, target] of targets) {
    const l = lso.get(partition) ?? -1n;
    if (l < target) out.push({ partition, lso: l, target });
  }
  return out.sort((a, b) => a.partition - b.partition);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The report line of a sink found stable: "sink stable: LSO reached HW on 6 partitions after 0.4 s". */
export function stableLine(topic: string, partitions: number, waitedMs: number): string {
  return `sink stable: LSO reached HW on ${partitions} partition${partitions === 1 ? '' : 's'} of ${topic} after ${seconds(waitedMs)}`;
}

/** The error of a sink that did not become stable in time: the partitions, their LSO and HW, and why. */
export function unstableMessage(topic: string, pending: UnstablePartition[], waitedMs: number): string {
  const list = pending.map((p) => `${p.partition} (LSO ${p.lso < 0n ? 'unknown' : p.lso}, HW ${p.target})`).join(', ');
  return (
    `sink ${topic} not stable after ${seconds(waitedMs)}: the last stable offset of partition${pending.length === 1 ? '' : 's'} ${list} ` +
    `is still below the high watermark taken when the read started. An open transaction holds ${pending.length === 1 ? 'it' : 'them'}: ` +
    'the records below the HW are not readable read_committed until it commits or aborts, so no verdict of loss is given ' +
    '(find the producer with kafka-transactions.sh describe-producers; it ends at its transaction.timeout at the latest)'
  );
}
