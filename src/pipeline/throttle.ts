// faultInjection.maxRecordsPerSecond: batches take turns for slots of the allowed rate, on the
// pipeline's clock. A batch of n records holds the next n/rate seconds; the batch after it waits
// until they have passed. A rate of 0 lets everything through at once.
import type { Clock } from '../runtime/clock.js';

export class Throttle {
  private until = 0;

  constructor(
    private readonly clock: Clock,
    private readonly recordsPerSecond: number,
  ) {}

  /** Resolves when `records` may go. */
  async take(records: number): Promise<void> {
    const rate = this.recordsPerSecond;
    if (rate <= 0 || records === 0) return;
    const now = this.clock.now();
    const start = Math.max(now, this.until);
    this.until = start + (records * 1000) / rate;
    if (start > now) await this.clock.sleep(start - now);
  }
}
