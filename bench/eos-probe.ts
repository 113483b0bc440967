// Preloaded into the benchmarked `eoswatch run` process (node --import <out>/compiled/eos-probe.mjs:
// bench/pipeline.bench.ts transpiles this file to JavaScript beside the compiled CLI)
// to record, unbinned, the values eoswatch itself puts into two of its metrics:
//   - every observation of eos_kafka_transaction_commit_latency_seconds (one per partition
//     transaction: commit() of kafkajs after the records were acknowledged and the offsets sent),
//   - every increment of eos_pipeline_records_total{direction="in"} (made right after a checkpoint
//     committed its transactions), which gives the exact time the last input record was committed.
// It wraps prom-client's Histogram.observeWithoutExemplar and Counter.incWithoutExemplar, which
// the constructors bind as observe() and inc() when exemplars are off (prom-client is CommonJS,
// so the pipeline imports the very classes patched here); src/ is not changed. One line per event is
// appended to $EOSBENCH_PROBE_FILE:
//   C <epochMs> <seconds>      a commit latency observation
//   R <epochMs> <count>        records committed by a checkpoint
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.EOSBENCH_PROBE_FILE;
if (file) {
  const require = createRequire(import.meta.url);
  const prom = require('prom-client') as typeof import('prom-client');
  type Labels = Record<string, string | number>;

  type Proto = Record<string, (this: { name: string }, ...args: unknown[]) => void>;
  const hist = prom.Histogram.prototype as unknown as Proto;
  const counter = prom.Counter.prototype as unknown as Proto;
  for (const [proto, method] of [
    [hist, 'observeWithoutExemplar'],
    [counter, 'incWithoutExemplar'],
  ] as const) {
    if (typeof proto[method] !== 'function') throw new Error(`eos-probe: prom-client has no ${method}; update bench/eos-probe.ts`);
  }

  const observe = hist.observeWithoutExemplar!;
  hist.observeWithoutExemplar = function (this: { name: string }, ...args: unknown[]): void {
    if (this.name === 'eos_kafka_transaction_commit_latency_seconds') {
      const v = typeof args[0] === 'number' ? args[0] : args[1];
      appendFileSync(file, `C ${Date.now()} ${String(v)}\n`);
    }
    observe.apply(this, args);
  };

  const inc = counter.incWithoutExemplar!;
  counter.incWithoutExemplar = function (this: { name: string }, ...args: unknown[]): void {
    if (this.name === 'eos_pipeline_records_total' && typeof args[0] === 'object' && args[0] !== null) {
      const labels = args[0] as Labels;
      const n = typeof args[1] === 'number' ? args[1] : 1;
      if (labels.direction === 'in' && n > 0) appendFileSync(file, `R ${Date.now()} ${n}\n`);
    }
    inc.apply(this, args);
  };
}
