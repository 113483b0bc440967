// What the group has lately said about this instance's membership, for the one step that must not
// be taken on an old word: initialising a partition's transactional producer. InitProducerId fences
// every other producer of the transactional id, so an instance paused past its session (a zombie)
// that resumes and initialises a producer for a partition it held before the pause fences the
// partition's new owner before its own rejoin tells it the partition moved; the owner's checkpoint
// then fails on the fencing (found by the zombie fault: test/integration/pipeline-faults.test.ts).
//
// The group's word: a join or an accepted heartbeat confirms this member; a refused heartbeat (a
// rebalance, an unknown member, an old generation) or a crashed consumer says it may no longer hold
// its assignment. A member confirmed within the last half session timeout, and not refused since,
// still holds its assignment: the coordinator hands a member's partitions on only after a full
// session without a heartbeat or through a rebalance this member joins. Pure: time comes from a
// Clock; source-consumer.ts reports the group's word, partition-task.ts asks before initialising.
import type { Clock } from '../runtime/clock.js';

export class GroupMembership {
  /** When the group was last asked for the word that confirmed this member (ms). */
  private confirmedAt = -Infinity;
  /** When this member was last refused (ms). */
  private refusedAt = -Infinity;
  private readonly waiters = new Set<(confirmed: boolean) => void>();

  constructor(
    private readonly clock: Clock,
    private readonly sessionTimeoutMs: number,
  ) {}

  /**
   * The group accepted a join or a heartbeat of this member, asked at `askedAt` (when the request
   * was sent: an answer read late, after a pause, speaks of that time, not of now).
   */
  confirmed(askedAt: number = this.clock.now()): void {
    this.confirmedAt = Math.max(this.confirmedAt, askedAt);
    if (this.fresh) this.settle(true);
  }

  /** The group refused this member, or its consumer crashed: only a word asked after this confirms it again. */
  lost(): void {
    this.refusedAt = this.clock.now();
    this.settle(false);
  }

  private get refused(): boolean {
    return this.refusedAt !== -Infinity && this.refusedAt >= this.confirmedAt;
  }

  /** Confirmed by a word asked within the last half session timeout, and not refused since. */
  get fresh(): boolean {
    return !this.refused && this.clock.now() - this.confirmedAt < this.sessionTimeoutMs / 2;
  }

  /**
   * True at once while fresh; false at once when refused (the consumer's rejoin decides, and a
   * wait here could hold the batch the rejoin waits for). Otherwise waits for the group's next
   * word, at most one session timeout: true when a fresh one confirms this member, false when the
   * group refuses it or says nothing new.
   */
  async confirm(): Promise<boolean> {
    if (this.fresh) return true;
    if (this.refused) return false;
    const stop = new AbortController();
    let answer!: (confirmed: boolean) => void;
    const word = new Promise<boolean>((resolve) => (answer = resolve));
    this.waiters.add(answer);
    try {
      return await Promise.race([word, this.clock.sleep(this.sessionTimeoutMs, stop.signal).then(() => false)]);
    } finally {
      this.waiters.delete(answer);
      stop.abort();
    }
  }

  private settle(confirmed: boolean): void {
    for (const w of this.waiters) w(confirmed);
    this.waiters.clear();
  }
}

/** kafkajs' error types of a heartbeat or fetch refused because this member no longer holds its assignment. */
const REFUSED = new Set(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'FENCED_INSTANCE_ID']);

/** A group refusal of this member (the error or one of its causes). */
export function isMembershipRefusal(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (REFUSED.has(String((e as { type?: unknown }).type))) return true;
  }
  return false;
}
