// One serializing lock: callers of run() take turns in the order they called, each fn starting
// once the previous one has settled, whether it resolved or threw (an error goes to its own
// caller and does not break the chain). The pipeline uses one per partition task (its sends,
// preCommit, commit and abort never interleave) and one for the service's control operations
// (checkpoints, rebalances, shutdown).
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  private held = 0;

  /** A run is in progress (started and not yet settled); queued runs do not count. */
  get busy(): boolean {
    return this.held > 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(async () => {
      this.held++;
      try {
        return await fn();
      } finally {
        this.held--;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }
}
