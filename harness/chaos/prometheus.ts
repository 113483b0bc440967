// A live Prometheus for chaos runs: the `prometheus` binary (Debian package prometheus, or
// $PROMETHEUS) on loopback with the shipped alert rules (alerts/eoswatch.rules.yml), scraping one
// eoswatch target every second and evaluating every second, so a round can see which alerts its
// faults fire. A tracked process (src/runtime/process.ts) under a parent-death signal: it never
// outlives the run; its data lives in a directory the caller removes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort } from '../localcluster/cluster.js';
import { pollUntil } from '../../src/runtime/poll-until.js';
import { TrackedProcess } from '../../src/runtime/process.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

/** The shipped alert rules, in the repository next to src/ (and dist/). */
export const RULES_FILE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'alerts', 'eoswatch.rules.yml');

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing' | string;
}

export class LivePrometheus {
  private constructor(
    private readonly proc: TrackedProcess,
    readonly url: string,
  ) {}

  /** Starts Prometheus scraping `target` (host:port, job "eoswatch"); rejects with the reason when it cannot. */
  static async start(opts: { dir: string; target: string; binary?: string; timeoutMs?: number }): Promise<LivePrometheus> {
    const binary = opts.binary ?? process.env.PROMETHEUS ?? 'prometheus';
    mkdirSync(opts.dir, { recursive: true });
    const config = join(opts.dir, 'prometheus.yml');
    writeFileSync(
      config,
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [RULES_FILE],
        scrape_configs: [{ job_name: 'eoswatch', static_configs: [{ targets: [opts.target] }] }],
      }),
    );
    const port = await freePort();
    const proc = TrackedProcess.spawn(binary, [`--config.file=${config}`, `--storage.tsdb.path=${join(opts.dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
      name: binary,
      pipe: true,
      dieWithParent: true,
    });
    const out = () => proc.output.slice(-4000);
    const p = new LivePrometheus(proc, `http://127.0.0.1:${port}`);
    let why: string | undefined;
    void proc.exited!.then((code) => {
      why = proc.error ? `cannot start ${binary}: ${proc.error.message} (install the Debian package prometheus, or set PROMETHEUS)` : `${binary} exited with ${code}:\n${out()}`;
    });
    try {
      await pollUntil('Prometheus ready', async () => why !== undefined || (await fetch(`${p.url}/-/ready`).then((r) => r.ok, () => false)), {
        timeoutMs: opts.timeoutMs ?? 60_000,
        intervalMs: 500,
      });
    } catch (err) {
      await p.stop();
      throw new EosError(ErrorCodes.HARNESS_FAILED, `${(err as Error).message}:\n${out()}`, { cause: err });
    }
    if (why !== undefined) throw new EosError(ErrorCodes.HARNESS_FAILED, why);
    return p;
  }

  /** Alerts pending or firing now. */
  async alerts(): Promise<ActiveAlert[]> {
    const r = (await (await fetch(`${this.url}/api/v1/alerts`, { signal: AbortSignal.timeout(5000) })).json()) as { data: { alerts: ActiveAlert[] } };
    return r.data.alerts;
  }

  /** An instant query, now or at `time` (Unix seconds); the series it returns. */
  async query(expr: string, time?: number): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const params = new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) });
    const r = (await (await fetch(`${this.url}/api/v1/query?${params}`, { signal: AbortSignal.timeout(10_000) })).json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (r.status !== 'success') throw new EosError(ErrorCodes.HARNESS_FAILED, `Prometheus rejected ${expr}: ${r.error}`);
    return r.data.result;
  }

  async stop(): Promise<void> {
    await this.proc.end(0);
    await this.proc.exited;
  }
}
