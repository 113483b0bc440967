// A transform module runs in a worker thread: a transform stuck in a synchronous loop, or whose
// Promise never settles, cannot block the event loop (HTTP server, signals, heartbeats). Each
// record gets pipeline.transformTimeout; past it the worker is terminated, the record goes to the
// dead-letter topic, and a fresh worker takes the rest of the batch. One worker serves all
// partitions, one batch at a time.
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import type { Logger } from '../../log.js';
import { withTimeout } from '../../util/timeout.js';
import { validOutputs, type BatchRecord, type Routed, type Transformer } from './route.js';

// Plain JavaScript (evaluated, not compiled): it must run as is under the build and under tsx.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const toBuffer = (v) => (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v);
const show = (v) => {
  try { return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v); } catch { return Object.prototype.toString.call(v); }
};
const thrown = (e) => (e instanceof Error ? { error: true, name: e.name, message: e.message } : { error: false, shown: show(e) });
const loaded = import(workerData.url).then((m) => m.transform ?? m.default);
loaded.then(() => parentPort.postMessage({ ready: true }));
parentPort.on('message', async ({ records }) => {
  const fn = await loaded;
  for (const r of records) {
    const headers = {};
    for (const [k, v] of Object.entries(r.headers)) headers[k] = Array.isArray(v) ? v.map(toBuffer) : toBuffer(v);
    let result;
    try {
      result = fn({ ...r, key: toBuffer(r.key), value: toBuffer(r.value), headers });
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') result = await result;
    } catch (e) {
      parentPort.postMessage({ thrown: thrown(e) });
      continue;
    }
    try {
      parentPort.postMessage({ result });
    } catch (e) {
      parentPort.postMessage({ invalid: 'result cannot be passed on (' + e.message + '); expected an object {key?, value, headers?} of Buffers and strings' });
    }
  }
});
`;

/** Longest wait for a fresh worker to load the module; per-record timeouts start after it. */
const WORKER_START_TIMEOUT_MS = 60_000;

interface WorkerReply {
  result?: unknown;
  thrown?: { error: true; name: string; message: string } | { error: false; shown: string };
  invalid?: string;
}

/** Buffers come back from a worker as Uint8Arrays (structured clone): make them Buffers again. */
function revive(v: unknown, depth = 0): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (depth > 3 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => revive(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x, depth + 1)]));
}

function reasonOf(reply: WorkerReply): string | null {
  const t = reply.thrown;
  if (t) {
    if (!t.error) return `transform threw a non-Error value: ${t.shown}`;
    return t.name === 'RejectedRecord' ? t.message : `transform threw: ${t.message}`;
  }
  return reply.invalid ?? null;
}

export class WorkerTransformer implements Transformer {
  private worker: Worker | undefined;
  /** Resolves once the current worker has loaded the module. */
  private ready: Promise<void> = Promise.resolve();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly url: string;

  constructor(
    modulePath: string,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    this.url = pathToFileURL(isAbsolute(modulePath) ? modulePath : resolve(process.cwd(), modulePath)).href;
  }

  run(records: BatchRecord[], source: { topic: string; partition: number }): Promise<Routed> {
    const next = this.queue.then(() => this.runBatch(records, source));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private spawn(): Worker {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { url: this.url } });
    this.ready = new Promise<void>((resolve, reject) => {
      const onReady = (m: { ready?: boolean }) => {
        if (m.ready) {
          w.off('message', onReady);
          resolve();
        }
      };
      w.on('message', onReady);
      w.once('error', reject);
      w.once('exit', (code) => reject(new Error(`exited with code ${code}`)));
    });
    this.ready.catch(() => undefined);
    // A worker that dies between batches is replaced at the next batch.
    w.on('error', () => undefined);
    w.once('exit', () => {
      if (this.worker === w) this.worker = undefined;
    });
    this.worker = w;
    return w;
  }

  private async runBatch(records: BatchRecord[], source: { topic: string; partition: number }): Promise<Routed> {
    const routed: Routed = { out: [], dlq: [] };
    let from = 0;
    while (from < records.length) from = await this.runFrom(records, from, source, routed);
    return routed;
  }

  /** Sends records[from..] to the worker; resolves with the index to go on from. */
  private async runFrom(records: BatchRecord[], from: number, source: { topic: string; partition: number }, routed: Routed): Promise<number> {
    const w = this.worker ?? this.spawn();
    try {
      // A slow start (a loaded machine, a heavy module) is not a record's fault.
      await withTimeout(this.ready, WORKER_START_TIMEOUT_MS, 'transform worker start');
    } catch (err) {
      if (this.worker === w) this.worker = undefined;
      void w.terminate();
      routed.dlq.push({ record: records[from]!, reason: `transform worker did not start: ${(err as Error).message}` });
      return from + 1;
    }
    return new Promise<number>((done) => {
      let next = from;
      let timer: NodeJS.Timeout | undefined;
      const finish = (resumeAt: number): void => {
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
        done(resumeAt);
      };
      const giveUp = (reason: string): void => {
        routed.dlq.push({ record: records[next]!, reason });
        finish(next + 1);
      };
      const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.logger.warn({ offset: records[next]!.offset, timeoutMs: this.timeoutMs }, 'transform timed out; restarting its worker thread');
          if (this.worker === w) this.worker = undefined;
          void w.terminate();
          giveUp(`transform timed out: no result within ${this.timeoutMs} ms (its worker thread was restarted)`);
        }, this.timeoutMs);
      };
      const onMessage = (reply: WorkerReply & { ready?: boolean }): void => {
        if (reply.ready) return;
        const record = records[next]!;
        const reason = reasonOf(reply);
        if (reason !== null) routed.dlq.push({ record, reason });
        else {
          try {
            routed.out.push(...validOutputs(revive(reply.result)));
          } catch (err) {
            routed.dlq.push({ record, reason: (err as Error).message });
          }
        }
        next++;
        if (next === records.length) finish(next);
        else arm();
      };
      const onError = (err: Error): void => {
        if (this.worker === w) this.worker = undefined;
        void w.terminate();
        giveUp(`transform worker failed: ${err.message}`);
      };
      const onExit = (code: number): void => {
        if (this.worker === w) this.worker = undefined;
        giveUp(`transform worker exited with code ${code}`);
      };
      w.on('message', onMessage);
      w.once('error', onError);
      w.once('exit', onExit);
      arm();
      w.postMessage({
        records: records.slice(from).map((r) => ({ ...source, offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers ?? {} })),
      });
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}
