// The daemon's status sampler: every `stepMs` (5 s) it reads the registry's series once (from the
// metric objects, src/metrics/samples.ts: no render, no text to parse), adds a point to
// the history ring (30 min by default, fixed size) and judges the alert conditions with their
// rules' `for:`, so that /status.json (src/http/status-page.ts) answers from the last sample: the
// same summary, alert timers and chart history for every reader, whoever polls and how often.
import type { Registry } from 'prom-client';
import type { AuditReport } from '../audit/runner.js';
import { sortFindings } from '../audit/report.js';
import { registrySamples } from '../metrics/samples.js';
import { redactText } from '../redact.js';
import type { Readiness, Service, ServiceHealth } from '../service.js';
import type { Logger } from '../log.js';
import { errorMessage } from '../errors.js';
import { Periodic } from '../runtime/periodic.js';
import { measured } from '../runtime/runs.js';
import { AlertTimers } from './alert-timers.js';
import { baseline, chartPoint, pointOf, Ring, type ChartPoint, type Point } from './history.js';
import { RATE_WINDOW_MS, STATUS_FAMILIES, summarize, type StatusSummary, type StreamsInputView, type TransactionsView } from './summary.js';

export interface SamplerDeps {
  registry: Registry;
  readiness(): Readiness;
  audit?(): AuditReport | undefined;
  /** The transactions service's last report, when it runs. */
  transactions?(): TransactionsView | undefined;
  /** The Streams service's last report, when it runs. */
  streams?(): StreamsInputView | undefined;
  logger?: Logger;
  now?: () => number;
  stepMs?: number;
  keepMs?: number;
}

export interface StatusHistory {
  stepSeconds: number;
  keepSeconds: number;
  /** Each chart point's rates cover up to this long before it. */
  windowSeconds: number;
  points: ChartPoint[];
}

export class StatusSampler implements Service {
  readonly name = 'status';
  readonly stepMs: number;
  readonly keepMs: number;
  private readonly points: Ring<Point>;
  private readonly charts: Ring<ChartPoint>;
  private readonly timers = new AlertTimers();
  private readonly now: () => number;
  /** A sample, measured (eos_service_run_*{service="status",task="sample"}). */
  private readonly measuredSample: () => Promise<void>;
  /** The samples after the first (which start() awaits). */
  private readonly periodic: Periodic;
  private sampling: Promise<void> | null = null;
  private latest: StatusSummary | undefined;

  constructor(private readonly deps: SamplerDeps) {
    this.stepMs = deps.stepMs ?? 5000;
    this.keepMs = deps.keepMs ?? 30 * 60_000;
    this.now = deps.now ?? Date.now;
    const capacity = Math.ceil(this.keepMs / this.stepMs);
    this.points = new Ring(capacity);
    this.charts = new Ring(capacity);
    this.measuredSample = measured({ registry: deps.registry, service: this.name, task: 'sample' }, () => this.sample());
    this.periodic = new Periodic(this.measuredSample, { name: 'the status sampler', intervalMs: this.stepMs, firstDelayMs: this.stepMs, onError: () => undefined });
  }

  async start(): Promise<void> {
    await this.measuredSample();
    this.periodic.start();
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.sampling;
  }

  ready(): ServiceHealth {
    return { ready: true };
  }

  /** One sample now (the timer calls this; a sample still running is not doubled). */
  sample(): Promise<void> {
    this.sampling ??= this.takeSample().finally(() => (this.sampling = null));
    return this.sampling;
  }

  private async takeSample(): Promise<void> {
    try {
      const metrics = await registrySamples(this.deps.registry, STATUS_FAMILIES);
      const atMs = this.now();
      const point = pointOf(atMs, metrics);
      const history = this.points.toArray();
      const ready = this.deps.readiness();
      const report = this.deps.audit?.();
      const summary = summarize(
        {
          url: '',
          current: { atMs, metrics },
          currentPoint: point,
          history,
          ready: { ok: ready.ready, services: ready.services },
          audit: report ? { summary: report.summary, findings: sortFindings(report.findings).filter((f) => !f.passed) } : undefined,
          transactions: this.deps.transactions?.(),
          streams: this.deps.streams?.(),
        },
        this.timers,
      );
      for (const a of summary.alerts) a.detail = redactText(a.detail);
      this.charts.push(chartPoint(baseline(history, atMs, RATE_WINDOW_MS), point));
      this.points.push(point);
      this.latest = summary;
    } catch (err) {
      this.deps.logger?.warn({ err: errorMessage(err) }, 'status sample failed');
    }
  }

  /** The last sample's summary (undefined before the first). */
  summary(): StatusSummary | undefined {
    return this.latest;
  }

  /** The chart points, oldest first; `sinceMs`: only those after it. */
  history(sinceMs = -Infinity): StatusHistory {
    return {
      stepSeconds: this.stepMs / 1000,
      keepSeconds: this.keepMs / 1000,
      windowSeconds: RATE_WINDOW_MS / 1000,
      points: this.charts.toArray().filter((p) => p.at > sinceMs),
    };
  }
}
