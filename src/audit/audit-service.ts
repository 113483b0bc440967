// The audit in the daemon: once at start, then on the node-cron schedule; each run sets the
// eos_audit_* gauges and replaces the report served on GET /audit. A run never overlaps the
// previous one, and nothing of it happens inside a scrape.
import { Router } from 'express';
import cron, { type ScheduledTask } from 'node-cron';
import type { Kafka } from 'kafkajs';
import { measured } from '../runtime/runs.js';
import type { Config } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { auditMetrics } from './metrics.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { ALL_CHECKS } from './checks/index.js';
import { sortFindings } from './report.js';
import { runAudit, type AuditReport } from './runner.js';
import { sourcesFromConfig } from './sources/index.js';
import { defineService } from '../service.js';
import { neededPermissions } from '../kafka/needed-acls.js';
import type { PermissionWatch } from '../kafka/permissions.js';
import { permissionWatch } from '../kafka/permission-probe.js';

export class AuditService implements Service {
  readonly name = 'audit';
  private task: ScheduledTask | undefined;
  private running: Promise<AuditReport | undefined> | undefined;
  private last: AuditReport | undefined;
  private readonly metrics;
  private readonly logger: Logger;
  private readonly built;
  private readonly measuredRun: () => Promise<AuditReport | undefined>;
  /** Names the ACLs the brokers refuse after a run whose cluster source failed. */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly config: Config,
    kafka: Kafka,
    ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    // Each run measured: eos_service_run_*{service="audit",task="run"} (src/runtime/runs.ts).
    this.measuredRun = measured({ registry: ctx.registry, service: this.name, task: 'run' }, () => this.audit(), (report) => report !== undefined);
    this.metrics = auditMetrics(ctx.registry);
    this.built = sourcesFromConfig(config, kafka);
    const p = config.pipeline;
    const names = { source: p.sourceTopic, sink: p.sinkTopic, dlq: p.deadLetterTopic ?? `${p.sinkTopic}.dlq`, group: p.groupId, prefix: p.transactionalIdPrefix };
    this.permissions = permissionWatch({ service: this.name, kafka, needed: () => neededPermissions(names, ['audit']), registry: ctx.registry, logger: ctx.logger });
  }

  get lastReport(): AuditReport | undefined {
    return this.last;
  }

  async start(): Promise<void> {
    void this.runOnce();
    this.task = cron.schedule(this.config.audit.schedule, () => void this.runOnce(), { name: 'eoswatch-audit', noOverlap: true });
  }

  /** Runs the audit unless a run is in progress (then waits for that one). */
  runOnce(): Promise<AuditReport | undefined> {
    this.running ??= this.measuredRun();
    return this.running;
  }

  /** One run; undefined when it threw (findings and broken sources are the report's: that run succeeded). */
  private async audit(): Promise<AuditReport | undefined> {
    try {
      const report = await runAudit(this.built.sources, ALL_CHECKS, { sourceTimeoutMs: this.config.audit.sourceTimeout });
      this.last = report;
      this.metrics.record(report);
      const refused = report.sources.filter((x) => !x.ok && x.name === 'cluster').map((x) => x.error ?? '');
      if (refused.length) await this.permissions.failed(refused.join('; '));
      else this.permissions.succeeded();
      const s = report.summary;
      const log = s.critical ? this.logger.warn.bind(this.logger) : this.logger.info.bind(this.logger);
      log({ critical: s.critical, warning: s.warning, passed: s.passed, checks: s.checks, ms: report.durationMs, failedSources: report.sources.filter((x) => !x.ok).map((x) => x.name) }, 'audit finished');
      return report;
    } catch (err) {
      this.logger.error({ err: errorMessage(err) }, 'audit run failed');
      return undefined;
    } finally {
      this.running = undefined;
    }
  }

  ready(): ServiceHealth {
    if (!this.last) return { ready: false, detail: 'first audit has not finished' };
    const s = this.last.summary;
    const missing = this.permissions.text();
    return { ready: true, detail: `last run ${this.last.startedAt}: ${s.critical} critical, ${s.warning} warning${missing ? `; ${missing}` : ''}` };
  }

  router(): Router {
    const r = Router();
    // The whole report by default (what scripts read); ?failing=1 keeps only failed findings,
    // ?pretty=1 indents it for people.
    r.get('/', (req, res) => {
      const flag = (name: string) => ['1', 'true', ''].includes(String(req.query[name] ?? 'no'));
      const send = (status: number, body: unknown) => res.status(status).type('application/json').send(`${JSON.stringify(body, null, flag('pretty') ? 2 : undefined)}\n`);
      if (!this.last) {
        send(503, { status: 'the first audit has not finished yet' });
        return;
      }
      const findings = sortFindings(this.last.findings);
      send(200, { ...this.last, findings: flag('failing') ? findings.filter((f) => !f.passed) : findings });
    });
    return r;
  }

  async stop(): Promise<void> {
    await this.task?.destroy();
    await this.running;
    await this.built.close();
  }
}

export const auditService = defineService({
  name: 'audit',
  section: 'audit',
  enabled: (config) => config.audit.enabled,
  create: ({ config, ctx, kafka }) => {
    const service = new AuditService(config, kafka({}, { retries: 1 }), ctx);
    return { service, routes: [{ path: '/audit', description: 'the last exactly-once configuration audit (JSON)', router: service.router() }] };
  },
});
