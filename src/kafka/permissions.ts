// Which of a service's ACLs the brokers refuse, by name. Kafka's refusals say only the kind of
// resource ("Not authorized to access topics", GROUP_AUTHORIZATION_FAILED, ...), and kafkajs
// often keeps only that message; a consumer that may not find its group's coordinator even
// reports "Failed to find group coordinator". So after a refusal the service asks the brokers
// what its principal may do on each resource it needs (KIP-430 authorized operations:
// src/kafka/authorized-operations.ts) and names each missing one: `permission missing: Write on
// topic:orders-enriched`. One gauge family for every service, eos_permission_missing{service,
// operation,resource}, 1 while missing; the text goes into the service's /readyz detail.
// A transactional id's Write cannot be asked for without fencing its holder: it is named from the
// refusal itself (TRANSACTIONAL_ID_AUTHORIZATION_FAILED). Pure but for the watch's probe, which
// src/kafka/permission-probe.ts sends (permissionWatch() there is what the services build).
import type { Kafka } from 'kafkajs';
import { Gauge, type Registry } from 'prom-client';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { definedOnce } from '../metrics/registry.js';
import { allows, type AclOperationName } from './authorized-operations.js';

export type ResourceKind = 'topic' | 'group' | 'transactional-id' | 'cluster';

/** One ACL a service needs: an operation on a literal resource, or on a prefix (prefixed). */
export interface NeededPermission {
  resource: ResourceKind;
  /** The literal name or, with prefixed, the prefix; 'kafka-cluster' for the cluster. */
  name: string;
  prefixed: boolean;
  operation: AclOperationName;
}

/** `topic:orders`, `transactional-id:orders-enricher*`, `cluster`. Pure. */
export function resourceText(p: Pick<NeededPermission, 'resource' | 'name' | 'prefixed'>): string {
  return p.resource === 'cluster' ? 'cluster' : `${p.resource}:${p.name}${p.prefixed ? '*' : ''}`;
}

/** `Write on topic:orders-enriched`. Pure. */
export function permissionText(p: NeededPermission): string {
  return `${p.operation} on ${resourceText(p)}`;
}

const REFUSALS: { kind: ResourceKind; type: string; message: RegExp }[] = [
  { kind: 'topic', type: 'TOPIC_AUTHORIZATION_FAILED', message: /not authorized to access topics|topic authorization failed|TOPIC_AUTHORIZATION_FAILED/i },
  { kind: 'group', type: 'GROUP_AUTHORIZATION_FAILED', message: /not authorized to access group|group authorization failed|GROUP_AUTHORIZATION_FAILED/i },
  { kind: 'transactional-id', type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', message: /transactional id authorization failed|TRANSACTIONAL_ID_AUTHORIZATION_FAILED/i },
  { kind: 'cluster', type: 'CLUSTER_AUTHORIZATION_FAILED', message: /cluster authorization failed|CLUSTER_AUTHORIZATION_FAILED/i },
];

/**
 * The kinds of resource an error (or a failure reason) says were refused: the kafkajs error
 * type anywhere in its cause chain, or kafkajs' message for it (which its non-retriable wrapper
 * keeps while dropping the type). Pure.
 */
export function refusedKinds(err: unknown): Set<ResourceKind> {
  const kinds = new Set<ResourceKind>();
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): void => {
    if (e === undefined || e === null || seen.has(e) || depth > 5) return;
    seen.add(e);
    const o = e as { type?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown };
    const text = errorMessage(e);
    for (const r of REFUSALS) if (o.type === r.type || r.message.test(text)) kinds.add(r.kind);
    visit(o.cause, depth + 1);
    visit(o.originalError, depth + 1);
    if (Array.isArray(o.errors)) for (const x of o.errors) visit(x, depth + 1);
  };
  visit(err, 0);
  return kinds;
}

/**
 * Whether a failure may come from a missing ACL and is worth asking the brokers about: a refusal,
 * a group coordinator kafkajs could not find (what a refused FindCoordinator becomes), or a topic
 * the metadata does not show (what a topic without Describe looks like). Pure.
 */
export function mayBeRefusal(err: unknown): boolean {
  if (refusedKinds(err).size > 0) return true;
  return /failed to find group coordinator|not found; create|topic not found|does not host this topic-partition|unknown topic/i.test(errorMessage(err));
}

/** Asks the brokers which of `needed` are granted (src/kafka/permission-probe.ts). */
export type PermissionProbe = (kafka: Kafka, needed: readonly NeededPermission[], refused: ReadonlySet<ResourceKind>) => Promise<PermissionVerdict[]>;

/** What the brokers said of one needed permission: granted, missing, or not judged (why). */
export interface PermissionVerdict {
  permission: NeededPermission;
  verdict: 'granted' | 'missing' | 'unknown';
  /** For missing and unknown: what the brokers answered (an error name, or the operations field). */
  why?: string;
}

const TOPIC_AUTHORIZATION_FAILED = 29;
const GROUP_AUTHORIZATION_FAILED = 30;
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/**
 * Judges needed permissions against what the brokers say (a pure function of the answers, for
 * the tests: `judge`), or `refused` for those no API reports. `refused`: the kinds the failure
 * that prompted the probe named (refusedKinds).
 */
export function judgePermissions(
  needed: readonly NeededPermission[],
  answers: {
    topics: Map<string, { errorCode: number; authorizedOperations: number }>;
    clusterOperations: number | undefined;
    groups: Map<string, { errorCode: number; authorizedOperations: number } | { error: string }>;
  },
  refused: ReadonlySet<ResourceKind>,
): PermissionVerdict[] {
  return needed.map((p): PermissionVerdict => {
    const by = (bits: number): PermissionVerdict => {
      const ok = allows(bits, p.operation);
      return ok === undefined ? { permission: p, verdict: 'unknown', why: 'the broker did not report its authorized operations' } : ok ? { permission: p, verdict: 'granted' } : { permission: p, verdict: 'missing', why: 'not among the authorized operations' };
    };
    if (p.resource === 'transactional-id' || p.prefixed) {
      // No API reports the operations on a transactional id (or a prefix): the refusal names it.
      return refused.has(p.resource) && p.operation !== 'Describe' ? { permission: p, verdict: 'missing', why: `${p.resource.toUpperCase().replace('-', '_')}_AUTHORIZATION_FAILED` } : { permission: p, verdict: 'unknown', why: 'Kafka reports no authorized operations for it' };
    }
    if (p.resource === 'cluster') {
      // Kafka fills the cluster's operations only for a principal that may describe the cluster
      // (KafkaApis): without Describe the field is empty, which says nothing of DescribeConfigs.
      const c = answers.clusterOperations ?? 0;
      if (allows(c, 'Describe') === true) return by(c);
      if (refused.has('cluster') && p.operation !== 'Describe') return { permission: p, verdict: 'missing', why: 'CLUSTER_AUTHORIZATION_FAILED' };
      return { permission: p, verdict: 'unknown', why: 'Kafka reports the cluster\u2019s operations only to a principal with Describe on it' };
    }
    if (p.resource === 'topic') {
      const t = answers.topics.get(p.name);
      if (!t) return { permission: p, verdict: 'unknown', why: 'no metadata answer' };
      if (t.errorCode === TOPIC_AUTHORIZATION_FAILED) return { permission: p, verdict: 'missing', why: 'TOPIC_AUTHORIZATION_FAILED (not even Describe)' };
      if (t.errorCode === UNKNOWN_TOPIC_OR_PARTITION) return { permission: p, verdict: 'unknown', why: 'the topic does not exist' };
      if (t.errorCode !== 0) return { permission: p, verdict: 'unknown', why: `metadata error ${t.errorCode}` };
      return by(t.authorizedOperations);
    }
    const g = answers.groups.get(p.name);
    if (!g) return { permission: p, verdict: 'unknown', why: 'no answer for the group' };
    if ('error' in g) return { permission: p, verdict: g.error === 'GROUP_AUTHORIZATION_FAILED' ? 'missing' : 'unknown', why: g.error };
    if (g.errorCode === GROUP_AUTHORIZATION_FAILED) return { permission: p, verdict: 'missing', why: 'GROUP_AUTHORIZATION_FAILED (not even Describe)' };
    if (g.errorCode !== 0) return { permission: p, verdict: 'unknown', why: `DescribeGroups error ${g.errorCode}` };
    return by(g.authorizedOperations);
  });
}

export const permissionMetrics = definedOnce((registry: Registry) => ({
  missing: new Gauge({
    name: 'eos_permission_missing',
    help: 'An ACL a service needs that the brokers refuse (operation, resource as in docs/security.md): 1 while missing, found by asking the brokers after a refusal (KIP-430 authorized operations). The service reports it in its /readyz detail and keeps running.',
    labelNames: ['service', 'operation', 'resource'],
    registers: [registry],
  }),
}));

/** At most one probe this often per service: a service failing in a loop does not flood the brokers. */
const MIN_PROBE_INTERVAL_MS = 5_000;

/**
 * A service's permissions: after a failed run that may be a refusal, asks the brokers which of
 * the service's needed permissions are missing, sets eos_permission_missing and keeps the text
 * for the service's readiness; after a successful run, clears them.
 */
export class PermissionWatch {
  private missingNow: PermissionVerdict[] = [];
  private lastProbeMs = -Infinity;
  private probing: Promise<string | undefined> | undefined;
  private readonly gauge: Gauge;

  constructor(
    private readonly opts: {
      service: string;
      kafka: Kafka;
      /** The service's needed permissions now (topics and groups it watches may change). */
      needed: () => NeededPermission[];
      registry: Registry;
      logger: Logger;
      now?: () => number;
      /** Asks the brokers (src/kafka/permission-probe.ts probePermissions; tests pass their own). */
      probe: PermissionProbe;
    },
  ) {
    this.gauge = permissionMetrics(opts.registry).missing;
  }

  /** `permission missing: A, B` while some are missing. */
  text(): string | undefined {
    return this.missingNow.length ? `permission missing: ${this.missingNow.map((v) => permissionText(v.permission)).join(', ')}` : undefined;
  }

  /**
   * After a failed run: when the failure may be a refusal, asks the brokers (at most every 5 s
   * until a run succeeds, the last answer standing meanwhile) and returns the text naming what
   * is missing, if anything.
   * Never throws: a probe that fails leaves the last answer.
   */
  async failed(err: unknown): Promise<string | undefined> {
    if (!mayBeRefusal(err)) return this.text();
    const now = (this.opts.now ?? Date.now)();
    if (this.probing) return this.probing;
    // The last answer stands for a while (a service failing in a loop, an outage: the brokers are
    // not asked at every failure); a refusal after a success is always asked about: it is news.
    if (now - this.lastProbeMs < MIN_PROBE_INTERVAL_MS) return this.text();
    this.lastProbeMs = now;
    this.probing = (async () => {
      try {
        const verdicts = await this.opts.probe(this.opts.kafka, this.opts.needed(), refusedKinds(err));
        this.set(verdicts.filter((v) => v.verdict === 'missing'));
      } catch (e) {
        this.opts.logger.debug({ err: errorMessage(e) }, 'could not ask the brokers which permissions are missing');
      } finally {
        this.probing = undefined;
      }
      return this.text();
    })();
    return this.probing;
  }

  /** After a successful run: nothing is missing any more. */
  succeeded(): void {
    this.lastProbeMs = -Infinity;
    this.set([]);
  }

  private set(missing: PermissionVerdict[]): void {
    const key = (v: PermissionVerdict) => permissionText(v.permission);
    const before = new Set(this.missingNow.map(key));
    const after = new Set(missing.map(key));
    for (const v of this.missingNow) this.gauge.remove({ service: this.opts.service, operation: v.permission.operation, resource: resourceText(v.permission) });
    for (const v of missing) this.gauge.set({ service: this.opts.service, operation: v.permission.operation, resource: resourceText(v.permission) }, 1);
    const added = missing.filter((v) => !before.has(key(v)));
    if (added.length) this.opts.logger.warn({ missing: added.map((v) => `${key(v)} (${v.why})`) }, `permission missing: ${added.map(key).join(', ')}; grant ${added.length > 1 ? 'them' : 'it'} to eoswatch's principal (docs/security.md)`);
    if (before.size && !after.size) this.opts.logger.info({ granted: [...before] }, 'the missing permissions are granted again');
    this.missingNow = missing;
  }
}
