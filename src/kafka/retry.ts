// Some kafkajs admin calls give up on errors Kafka marks retriable (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS right after a group's coordinator moves or loads).
export function isRetriable(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { retriable?: boolean }).retriable === true) return true;
  }
  return false;
}

export async function retryRetriable<T>(fn: () => Promise<T>, opts: { attempts?: number; delayMs?: number; maxDelayMs?: number } = {}): Promise<T> {
  const attempts = opts.attempts ?? 20;
  let delay = opts.delayMs ?? 100;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !isRetriable(err)) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2000);
    }
  }
}
