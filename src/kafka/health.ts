// Probes the cluster on a timer (never inside a scrape):
// - eos_kafka_up: 1 while any broker answers (the cluster's metadata through the configured
//   bootstrap brokers, or any one broker's own probe), 0 when none does. One broker down of
//   three is not a cluster down: that is eos_kafka_broker_up.
// - eos_kafka_broker_up{broker="<node id>"}: 1 when that broker answered its own probe, 0 when
//   it did not within the probe timeout. Each broker the cluster ever reported (by node id, its
//   advertised address) is probed over a connection of its own, all at once, each bounded by
//   the timeout, so a paused (SIGSTOPped) broker, which accepts TCP connections and never
//   answers, counts as down without holding up the others. A broker that left the metadata
//   (KRaft drops a dead broker after its session timeout) keeps its series: it is still down.
//   One 0/1 series per target, like Prometheus' own `up`: sum() counts the brokers that answer,
//   `== 0` names the one that does not, and an alert on it carries the broker label. Node ids
//   are bounded by the cluster's size.
// - eos_kafka_brokers: brokers in the last metadata the cluster returned.
// A cluster that does not answer is `eos_kafka_up 0`, never a crash. The service is ready once it
// has probed once, whatever the answer: readiness must not hide a down cluster from Prometheus by
// taking the sidecar out of its Service endpoints.
import { Gauge, type Registry } from 'prom-client';
import type { Kafka } from 'kafkajs';
import { ClusterMetadataReader } from './cluster-metadata.js';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import type { Periodic } from '../runtime/periodic.js';
import { every } from '../runtime/runs.js';
import { defineService } from '../service.js';

/** The Kafka health probe's metrics, defined into `registry` (the service, and docs/metrics.md's generator). */
export function defineKafkaHealthMetrics(registry: Registry): { up: Gauge; brokers: Gauge; brokerUp: Gauge<'broker'> } {
  return {
    up: new Gauge({ name: 'eos_kafka_up', help: '1 while any Kafka broker answered the last probe, 0 when none did.', registers: [registry] }),
    brokers: new Gauge({ name: 'eos_kafka_brokers', help: 'Brokers in the last metadata the cluster returned.', registers: [registry] }),
    brokerUp: new Gauge({
      name: 'eos_kafka_broker_up',
      help: '1 when the broker (by node id) answered its own last probe within the probe timeout, 0 otherwise.',
      labelNames: ['broker'],
      registers: [registry],
    }),
  };
}

export interface KafkaHealthOptions {
  /** How long one probe (a broker's, or the cluster's metadata) may take before it counts as failed. */
  probeTimeoutMs?: number;
  /**
   * A client whose only bootstrap broker is `address` (host:port), with the cluster's TLS and SASL:
   * each broker is probed over a connection of its own. Without it only eos_kafka_up is probed.
   */
  clientFor?: (address: string) => Kafka;
}

interface BrokerInfo {
  nodeId: number;
  host: string;
  port: number;
}

type BrokerProbe = { ok: true; brokers: BrokerInfo[] } | { ok: false; error: string };

/** Default probe timeout: a broker that has not answered in 10 s is down for a watchdog. */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class KafkaHealthService implements Service {
  readonly name = 'kafka-health';
  private readonly periodic: Periodic;
  /** The cluster's metadata through the configured bootstrap brokers (brokers only: no topic's partitions). */
  private reader: ClusterMetadataReader | undefined;
  private stopped = true;
  private probed = false;
  private lastError: string | undefined;
  private readonly up: Gauge;
  private readonly brokers: Gauge;
  private readonly brokerUp: Gauge<'broker'>;
  private readonly logger: Logger;
  private readonly probeTimeoutMs: number;
  /** Every broker the cluster reported, by node id: its advertised address. */
  private readonly known = new Map<number, string>();
  /** Brokers whose last probe failed, with why (for the log and /readyz). */
  private readonly down = new Map<number, string>();
  private readonly clients = new Map<string, Kafka>();
  /** Disconnects of probe clients still under way (a paused broker's socket), awaited by stop(). */
  private readonly closing = new Set<Promise<unknown>>();

  constructor(
    private readonly kafka: Kafka,
    intervalMs: number,
    ctx: ServiceContext,
    private readonly opts: KafkaHealthOptions = {},
  ) {
    this.logger = ctx.logger;
    this.probeTimeoutMs = opts.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    ({ up: this.up, brokers: this.brokers, brokerUp: this.brokerUp } = defineKafkaHealthMetrics(ctx.registry));
    this.periodic = every(() => this.probe(), {
      registry: ctx.registry,
      service: this.name,
      task: 'probe',
      name: 'the Kafka health probe',
      intervalMs,
      onError: (err) => this.logger.warn({ err: errorMessage(err) }, 'Kafka health probe failed'),
    });
  }

  async start(): Promise<void> {
    this.reader = new ClusterMetadataReader(this.kafka);
    this.stopped = false;
    this.periodic.start();
  }

  private client(address: string): Kafka {
    let k = this.clients.get(address);
    if (!k) {
      k = this.opts.clientFor!(address);
      this.clients.set(address, k);
    }
    return k;
  }

  private disconnectLater(reader: ClusterMetadataReader): void {
    const p = reader.disconnect();
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }

  /** The cluster's metadata through the configured bootstrap brokers. */
  private async probeCluster(): Promise<BrokerProbe> {
    const reader = this.reader;
    if (!reader) return { ok: false, error: 'stopped' };
    try {
      const brokers = await within(this.probeTimeoutMs, 'the cluster', reader.brokers());
      return { ok: true, brokers };
    } catch (err) {
      // A connection stuck on a paused broker is dropped; the next probe connects afresh.
      this.disconnectLater(reader);
      return { ok: false, error: errorMessage(err) };
    }
  }

  /** One broker over a connection of its own: connect (ApiVersions, SASL) and Metadata, answered by that broker. */
  private async probeBroker(nodeId: number, address: string): Promise<BrokerProbe> {
    const reader = new ClusterMetadataReader(this.client(address));
    try {
      const brokers = await within(this.probeTimeoutMs, `broker ${nodeId} (${address})`, reader.brokers());
      return { ok: true, brokers };
    } catch (err) {
      return { ok: false, error: errorMessage(err) };
    } finally {
      this.disconnectLater(reader);
    }
  }

  /** Adds the brokers of a metadata answer to the known ones; the ids not known before. */
  private learn(brokers: BrokerInfo[]): number[] {
    const added: number[] = [];
    for (const b of brokers) {
      if (!this.known.has(b.nodeId)) added.push(b.nodeId);
      this.known.set(b.nodeId, `${b.host}:${b.port}`);
    }
    return added;
  }

  private record(nodeId: number, r: BrokerProbe): void {
    const address = this.known.get(nodeId);
    this.brokerUp.set({ broker: String(nodeId) }, r.ok ? 1 : 0);
    if (r.ok) {
      if (this.down.delete(nodeId)) this.logger.info({ broker: nodeId, address }, `Kafka broker ${nodeId} answers again`);
    } else {
      if (!this.down.has(nodeId)) this.logger.warn({ broker: nodeId, address, err: r.error }, `Kafka broker ${nodeId} does not answer`);
      this.down.set(nodeId, r.error);
    }
  }

  async probe(): Promise<boolean> {
    if (!this.reader) return false;
    try {
      const perBroker = !!this.opts.clientFor;
      const ids = perBroker ? [...this.known.keys()] : [];
      const [cluster, ...answers] = await Promise.all([this.probeCluster(), ...ids.map((id) => this.probeBroker(id, this.known.get(id)!))]);
      const results = new Map(ids.map((id, i) => [id, answers[i]!]));
      let metadata = cluster.ok ? cluster.brokers : undefined;
      for (const r of results.values()) if (r.ok) metadata ??= r.brokers;
      // Brokers reported for the first time are probed at once, not an interval later.
      const added = metadata && perBroker ? this.learn(metadata) : [];
      for (const r of results.values()) if (r.ok && perBroker) added.push(...this.learn(r.brokers).filter((id) => !added.includes(id)));
      const late = await Promise.all(added.map((id) => this.probeBroker(id, this.known.get(id)!)));
      added.forEach((id, i) => results.set(id, late[i]!));
      // Stopped meanwhile: no reading, and no failure either.
      if (this.stopped) return true;
      for (const [id, r] of results) this.record(id, r);
      if (metadata) this.brokers.set(metadata.length);
      const anyUp = cluster.ok || [...results.values()].some((r) => r.ok);
      this.up.set(anyUp ? 1 : 0);
      if (anyUp) {
        if (this.lastError !== undefined) this.logger.info({ brokers: metadata?.length }, 'Kafka cluster reachable again');
        this.lastError = undefined;
      } else {
        const msg = cluster.ok ? 'no broker answered' : cluster.error;
        if (this.lastError !== msg) this.logger.warn({ err: msg }, 'Kafka cluster unreachable');
        this.lastError = msg;
      }
      return anyUp;
    } finally {
      this.probed = true;
    }
  }

  ready(): ServiceHealth {
    if (!this.probed) return { ready: false, detail: 'first probe of the cluster has not finished' };
    if (this.lastError) return { ready: true, detail: `cluster unreachable: ${this.lastError}` };
    const down = [...this.down.keys()].sort((a, b) => a - b);
    return { ready: true, detail: down.length ? `cluster reachable; broker${down.length > 1 ? 's' : ''} ${down.join(', ')} not answering` : 'cluster reachable' };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const reader = this.reader;
    this.reader = undefined;
    // Disconnecting fails a probe in flight at once; it reports itself and is not rescheduled.
    const stopping = this.periodic.stop();
    await reader?.disconnect();
    await stopping;
    // A paused broker's socket may not close at once; do not wait for it longer than a probe.
    await within(this.probeTimeoutMs, 'probe connections', Promise.all([...this.closing])).catch(() => undefined);
  }
}

export const kafkaHealthService = defineService({
  name: 'kafka-health',
  section: 'kafka',
  enabled: () => true,
  create: ({ config, ctx, kafka }) => ({
    service: new KafkaHealthService(kafka({}, { retries: 0 }), config.kafka.healthCheckInterval, ctx, {
      // A broker that has not answered within a request timeout (at most 10 s) counts as down.
      probeTimeoutMs: Math.min(config.kafka.requestTimeout, DEFAULT_PROBE_TIMEOUT_MS),
      clientFor: (address) => kafka({ brokers: [address] }, { retries: 0 }),
    }),
  }),
});
