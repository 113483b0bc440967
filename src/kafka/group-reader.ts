// Consumer groups' committed offsets and states for the lag service, without kafkajs' admin.
// kafkajs' admin.fetchOffsets() and describeGroups() ask FindCoordinator before every call (at 100
// groups, 200 requests every reading), and its cluster keeps the metadata of the whole cluster
// from the refresh that first meets the coordinator (at 10,000 partitions about 2.2 MB of objects,
// one more copy beside the metadata reader's); its OffsetFetch answer is an object per partition
// with the offset as the decimal string of a Long. Here each group's coordinator is kept
// (Coordinators, as Kafka's own clients keep it) until a call to it fails with a stale
// coordinator or a broken connection, then asked for once more; the requests are kafkajs' own
// (its version, sent over its connections of the metadata reader's cluster: TLS, SASL and
// throttling stay kafkajs'), and the answers are read here into the offsets of the watched topics
// and each group's state and member count. kafkajs 2.2.4's inner API, as cluster-metadata.ts.
import { createRequire } from 'node:module';
import { Reader, ProtocolDecodeError } from './wire.js';
import { classifyCoordinatorError } from './coordinator-errors.js';

const require = createRequire(import.meta.url);
const apiKeys = require('kafkajs/src/protocol/requests/apiKeys') as { OffsetFetch: number; DescribeGroups: number };
const { requests } = require('kafkajs/src/protocol/requests') as { requests: { OffsetFetch: unknown; DescribeGroups: unknown } };
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(code: number): Error };

/** One group's committed offsets: by topic, by partition (-1: none committed). */
export type CommittedOffsets = Map<string, Map<number, bigint>>;

/**
 * An OffsetFetch response (versions 1–4, kafkajs' range; the body after the correlation id): the
 * offsets of the topics `wanted` keeps, the group's error (v2 and later) and the first partition
 * error (kafkajs' answer fails on either).
 */
export function decodeOffsetFetch(body: Buffer, version: number, wanted: (topic: string) => boolean = () => true): { throttleTimeMs: number; offsets: CommittedOffsets; errorCode: number } {
  const r = new Reader(body, `OffsetFetch v${version} response`);
  const throttleTimeMs = version >= 3 ? r.int32('throttle_time_ms') : 0;
  const offsets: CommittedOffsets = new Map();
  let errorCode = 0;
  const nTopics = r.int32('topics count');
  if (nTopics < 0 || nTopics > body.length) throw new ProtocolDecodeError(`${r.what}: topics count ${nTopics} exceeds the message`);
  for (let t = 0; t < nTopics; t++) {
    const topic = r.string('name');
    const nPartitions = r.int32('partitions count');
    if (nPartitions < 0 || nPartitions > body.length) throw new ProtocolDecodeError(`${r.what}: partitions count ${nPartitions} exceeds the message`);
    const keep = wanted(topic);
    const parts = keep ? new Map<number, bigint>() : undefined;
    for (let p = 0; p < nPartitions; p++) {
      const partition = r.int32('partition_index');
      const offset = r.bigint64('committed_offset');
      r.nullableString('metadata');
      const code = r.int16('error_code');
      if (code !== 0 && errorCode === 0) errorCode = code;
      parts?.set(partition, offset);
    }
    if (parts) offsets.set(topic, parts);
  }
  if (version >= 2) {
    const code = r.int16('error_code');
    if (code !== 0) errorCode = code;
  }
  r.end();
  return { throttleTimeMs, offsets, errorCode };
}

export interface GroupDescription {
  groupId: string;
  errorCode: number;
  state: string;
  /** How many members the group has (their metadata and assignments are skipped). */
  members: number;
  /** v3 and later (include_authorized_operations): the operations' bit field. */
  authorizedOperations?: number;
}

/** A DescribeGroups response (versions 0–3; the body after the correlation id), each group's state and member count. */
export function decodeDescribeGroups(body: Buffer, version: number, offset = 0): { throttleTimeMs: number; groups: GroupDescription[] } {
  const what = `DescribeGroups v${version} response`;
  const r = new Reader(body, what, offset);
  const throttleTimeMs = version >= 1 ? r.int32('throttle_time_ms') : 0;
  const skipBytes = (x: Reader, field: string) => {
    const n = x.int32(`${field} length`);
    if (n < 0 || x.offset + n > x.buf.length) throw new ProtocolDecodeError(`${what}: ${field} runs past the end (${n} bytes, ${x.buf.length - x.offset} left)`);
    x.offset += n;
  };
  const groups =
    r.nullableArray('groups', (x): GroupDescription => {
      const errorCode = x.int16('error_code');
      const groupId = x.string('group_id');
      const state = x.string('group_state');
      x.string('protocol_type');
      x.string('protocol_data');
      const members =
        x.nullableArray('members', (m) => {
          m.string('member_id');
          m.string('client_id');
          m.string('client_host');
          skipBytes(m, 'member_metadata');
          skipBytes(m, 'member_assignment');
        })?.length ?? 0;
      return version >= 3 ? { groupId, errorCode, state, members, authorizedOperations: x.int32('authorized_operations') } : { groupId, errorCode, state, members };
    }) ?? [];
  r.end();
  return { throttleTimeMs, groups };
}

/**
 * Each group's coordinator, asked for once and kept until a call to it fails with a stale
 * coordinator (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) or a broken connection: then asked for
 * again and the call sent once more. Pure apart from `find`.
 */
export class Coordinators {
  private readonly known = new Map<string, number>();
  private asked = 0;

  constructor(private readonly find: (group: string) => Promise<number>) {}

  /** FindCoordinator requests made (tests read it). */
  get lookups(): number {
    return this.asked;
  }

  /** The group's coordinator, from the kept ones or asked for. */
  async of(group: string): Promise<number> {
    const k = this.known.get(group);
    if (k !== undefined) return k;
    this.asked++;
    const nodeId = await this.find(group);
    this.known.set(group, nodeId);
    return nodeId;
  }

  /**
   * `send` to the group's coordinator; when that fails because the coordinator moved (or its
   * connection broke), the coordinator is asked for again and `send` runs once more.
   */
  async call<T>(group: string, send: (nodeId: number) => Promise<T>): Promise<T> {
    const first = await this.of(group);
    try {
      return await send(first);
    } catch (err) {
      if (classifyCoordinatorError(err) !== 'refind') throw err;
      this.forget(group);
      return send(await this.of(group));
    }
  }

  /** Forgets a group's coordinator (it moved, or the group is no longer read). */
  forget(group: string): void {
    this.known.delete(group);
  }

  /** Keeps the coordinators of `groups` only. */
  retain(groups: ReadonlySet<string>): void {
    for (const g of this.known.keys()) if (!groups.has(g)) this.known.delete(g);
  }
}

interface ProtocolRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  encode(): Promise<unknown>;
}

/** The part of a kafkajs Broker (2.2.4) these requests need. */
export interface GroupBroker {
  lookupRequest(apiKey: number, definition: unknown): (args: object) => { request: ProtocolRequest };
  connectionPool: { send(req: { request: ProtocolRequest; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> } }): Promise<unknown> };
}

/** The part of a kafkajs Cluster (2.2.4) the reader needs. */
export interface GroupCluster {
  findBroker(req: { nodeId: string }): Promise<GroupBroker>;
  findGroupCoordinatorMetadata(req: { groupId: string; coordinatorType: number }): Promise<{ coordinator: { nodeId: number } }>;
}

/** kafkajs' throttling fields of an answer: from KIP-219 on (OffsetFetch v4, DescribeGroups v2) the client throttles. */
const throttle = (ms: number, clientSide: boolean) => (clientSide ? { throttleTime: 0, clientSideThrottleTime: ms } : { throttleTime: ms });

/** Sends kafkajs' request of `apiKey` with `args` to `broker`, its answer read by `decode`. */
async function send<T>(broker: GroupBroker, apiKey: number, definition: unknown, args: object, decode: (b: Buffer, version: number) => T & { throttleTimeMs: number }, clientSideFrom: number): Promise<T> {
  const { request } = broker.lookupRequest(apiKey, definition)(args);
  const version = request.apiVersion;
  return (await broker.connectionPool.send({
    request,
    response: {
      decode: async (b: Buffer) => {
        const d = decode(b, version);
        return { ...d, ...throttle(d.throttleTimeMs, version >= clientSideFrom) };
      },
      parse: async (x: unknown) => x,
    },
  })) as T;
}

const COORDINATOR_TYPE_GROUP = 0;

/** Committed offsets and descriptions of consumer groups, over the connections of `cluster` (the metadata reader's). */
export class GroupReader {
  readonly coordinators: Coordinators;

  constructor(private readonly cluster: GroupCluster) {
    this.coordinators = new Coordinators(async (groupId) => (await cluster.findGroupCoordinatorMetadata({ groupId, coordinatorType: COORDINATOR_TYPE_GROUP })).coordinator.nodeId);
  }

  private async broker(nodeId: number): Promise<GroupBroker> {
    // A broker the client has not met yet: kafkajs refreshes its metadata and fails this once.
    return this.cluster.findBroker({ nodeId: String(nodeId) }).catch(() => this.cluster.findBroker({ nodeId: String(nodeId) }));
  }

  /**
   * The group's committed offsets on every topic `wanted` keeps (OffsetFetch of all the group's
   * topics). Fails with kafkajs' error for the group's error or a partition's, as admin.fetchOffsets().
   */
  async offsets(groupId: string, wanted?: (topic: string) => boolean): Promise<CommittedOffsets> {
    return this.coordinators.call(groupId, async (nodeId) => {
      const d = await send(await this.broker(nodeId), apiKeys.OffsetFetch, requests.OffsetFetch, { groupId, topics: [] }, (b, v) => decodeOffsetFetch(b, v, wanted), 4);
      if (d.errorCode !== 0) throw createErrorFromCode(d.errorCode);
      return d.offsets;
    });
  }

  /**
   * The state and member count of each group: one DescribeGroups per coordinator. A group its
   * coordinator answers with an error (after one more try when the coordinator moved) is left out.
   */
  async describe(groupIds: readonly string[]): Promise<{ groups: GroupDescription[]; failed: { groupId: string; error: Error }[] }> {
    const out: GroupDescription[] = [];
    const failed: { groupId: string; error: Error }[] = [];
    let ask = [...groupIds];
    for (let attempt = 0; ask.length && attempt < 2; attempt++) {
      const again: string[] = [];
      const byNode = new Map<number, string[]>();
      for (const g of ask) {
        try {
          const n = await this.coordinators.of(g);
          byNode.set(n, [...(byNode.get(n) ?? []), g]);
        } catch (err) {
          failed.push({ groupId: g, error: err as Error });
        }
      }
      await Promise.all(
        [...byNode].map(async ([nodeId, groups]) => {
          let answer: GroupDescription[];
          try {
            answer = (await send(await this.broker(nodeId), apiKeys.DescribeGroups, requests.DescribeGroups, { groupIds: groups }, (b, v) => decodeDescribeGroups(b, v), 2)).groups;
          } catch (err) {
            // The coordinator is gone (a broken connection): ask again who it is.
            for (const g of groups) this.settle(g, err as Error, attempt, again, failed);
            return;
          }
          for (const d of answer) {
            if (d.errorCode === 0) out.push(d);
            else this.settle(d.groupId, createErrorFromCode(d.errorCode), attempt, again, failed);
          }
        }),
      );
      ask = again;
    }
    return { groups: out, failed };
  }

  /** A group whose description failed: asked again on the first attempt when its coordinator moved, otherwise failed. */
  private settle(group: string, error: Error, attempt: number, again: string[], failed: { groupId: string; error: Error }[]): void {
    if (attempt === 0 && classifyCoordinatorError(error) === 'refind') {
      this.coordinators.forget(group);
      again.push(group);
    } else failed.push({ groupId: group, error });
  }
}
