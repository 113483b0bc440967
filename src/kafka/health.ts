// Probes the cluster on a timer (never inside a scrape) and sets eos_kafka_up. A cluster that
// does not answer is `eos_kafka_up 0`, never a crash. The service is ready once it has probed
// once, whatever the answer: readiness must not hide a down cluster from Prometheus by taking
// the sidecar out of its Service endpoints.
import { Gauge, type Registry } from 'prom-client';
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { errorMessage } from '../errors.js';

/** The Kafka health probe's metrics, defined into `registry` (the service, and docs/metrics.md's generator). */
export function defineKafkaHealthMetrics(registry: Registry): { up: Gauge; brokers: Gauge } {
  return {
    up: new Gauge({ name: 'eos_kafka_up', help: '1 when the Kafka cluster answered the last probe, 0 otherwise.', registers: [registry] }),
    brokers: new Gauge({ name: 'eos_kafka_brokers', help: 'Brokers the cluster reported in the last successful probe.', registers: [registry] }),
  };
}

export class KafkaHealthService implements Service {
  readonly name = 'kafka-health';
  private timer: NodeJS.Timeout | undefined;
  private admin: Admin | undefined;
  private probed = false;
  private lastError: string | undefined;
  private running: Promise<unknown> | undefined;
  private readonly up: Gauge;
  private readonly brokers: Gauge;
  private readonly logger: Logger;

  constructor(
    private readonly kafka: Kafka,
    private readonly intervalMs: number,
    ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    ({ up: this.up, brokers: this.brokers } = defineKafkaHealthMetrics(ctx.registry));
  }

  async start(): Promise<void> {
    this.admin = this.kafka.admin({ retry: { retries: 0 } });
    this.schedule(0);
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.running = this.probe().finally(() => {
        this.running = undefined;
        if (this.admin) this.schedule(this.intervalMs);
      });
    }, delay);
  }

  async probe(): Promise<boolean> {
    const admin = this.admin;
    if (!admin) return false;
    try {
      await admin.connect();
      const { brokers } = await admin.describeCluster();
      this.up.set(1);
      this.brokers.set(brokers.length);
      if (this.lastError !== undefined) this.logger.info({ brokers: brokers.length }, 'Kafka cluster reachable again');
      this.lastError = undefined;
      return true;
    } catch (err) {
      this.up.set(0);
      const msg = errorMessage(err);
      if (this.lastError !== msg) this.logger.warn({ err: msg }, 'Kafka cluster unreachable');
      this.lastError = msg;
      await admin.disconnect().catch(() => undefined);
      return false;
    } finally {
      this.probed = true;
    }
  }

  ready(): ServiceHealth {
    if (!this.probed) return { ready: false, detail: 'first probe of the cluster has not finished' };
    return { ready: true, detail: this.lastError ? `cluster unreachable: ${this.lastError}` : 'cluster reachable' };
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    const admin = this.admin;
    this.admin = undefined;
    // Disconnecting fails a probe in flight at once; it reports itself and is not rescheduled.
    await admin?.disconnect().catch(() => undefined);
    await this.running;
  }
}
