// What the Flink service reads of a job's vertices' metrics through the REST API: records in and
// out (eos_pipeline_records_total) and the KafkaSink's commit time and committables, each added as
// the growth of Flink's own counters; and the state it keeps per watched job between polls. The
// service (flink-service.ts) calls these on every poll of a running job; the pure rules are
// poller.ts's.
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { FlinkMetrics } from '../metrics/flink.js';
import type { PipelineMetrics } from '../metrics/pipeline.js';
import { chunkIds, counterDelta, counterGrowth, recordMetricIds, sinkMetricIds, sourceTopics, type CheckpointTrack, type MetricValue, type RecordMetricIds, type SinkMetricIds } from './poller.js';
import { FlinkHttpError, type FlinkRestClient } from './rest-client.js';
import type { CheckpointConfigInfo } from './rest-types.js';
import type { SinkCommitTracker } from './sink-commits.js';

/** A job the service watches: its labels and what it keeps between polls. */
export interface WatchedJob {
  labels: PipelineLabels;
  /** Up at the last poll (eos_pipeline_up). */
  up?: boolean;
  /** The label objects of eos_pipeline_records_total, the same on every reading (src/metrics/render.ts). */
  recordLabels: { in: PipelineLabels & { direction: string }; out: PipelineLabels & { direction: string } };
  track?: CheckpointTrack;
  lastExceptionTs?: number;
  checkpointConfig?: CheckpointConfigInfo | null;
  checkpointingDisabled?: boolean;
  /** Vertices holding the KafkaSink's writer and committer metrics; undefined until found. */
  sinkVertices?: { vid: string; ids: SinkMetricIds }[];
  /** Vertices holding the sources' and sink writers' record counters (per-subtask ids); undefined until found. */
  recordVertices?: { vid: string; ids: RecordMetricIds }[];
  /** When the record counters were last listed (ms): listed again every RELIST_MS, and until both directions show up. */
  recordsListedAt?: number;
  /** Last raw value of each per-subtask record counter, by metric id. */
  recordPrev: Map<string, Map<string, number>>;
  /** Kafka topics the job's KafkaSource reads, as its metric ids spell them (metricScopeName), for the lag series' labels. */
  sourceTopics: string[];
  /** Last raw value of each sink counter, by vertex and figure. */
  sinkPrev: Map<string, number>;
  /** The job's Kafka sink topics (flink.sinks), for the visibility latency. */
  sinkTopics: string[];
  /** The KafkaSink's commits per checkpoint (flink.transactionalIdPrefixes), fed by the transactions service. */
  commits?: SinkCommitTracker;
  /** Logged once: the JobManager's clock was found ahead of the coordinators'. */
  skewLogged?: boolean;
}

/** Longest query string of one metrics request (Flink's REST server refuses request lines over 4096 bytes). */
const MAX_GET_CHARS = 3000;

/**
 * The record counters are listed again this often: the REST server's metric list fills as its
 * metric fetcher (metrics.fetcher.update-interval, 10 s) hears from each task, so an early list can
 * lack operators (recorded: test/fixtures/flink/subtask-metric-list-early.json), and a rescaled job
 * has other subtasks.
 */
const RELIST_MS = 60_000;

/**
 * Records in and out (eos_pipeline_records_total): the sources' numRecordsIn and the sink
 * writers' numRecordsOut / numRecordsSend, read per subtask from the vertices' metrics
 * (GET /jobs/<jid>/vertices/<vid>/metrics?get=…) and added as counter growth.
 */
export async function pollRecords(client: FlinkRestClient, pipeline: PipelineMetrics, jid: string, w: WatchedJob): Promise<void> {
  try {
    const complete = (v: { ids: RecordMetricIds }[]) => v.some((x) => x.ids.in.length) && v.some((x) => x.ids.out.length);
    const now = Date.now();
    if (!w.recordVertices || !complete(w.recordVertices) || now - (w.recordsListedAt ?? 0) >= RELIST_MS) {
      const job = await client.get<{ vertices: { id: string }[] }>(`/jobs/${jid}`);
      const found: { vid: string; ids: RecordMetricIds }[] = [];
      const topics = new Set<string>();
      for (const v of job.vertices) {
        const list = (await client.get<{ id: string }[]>(`/jobs/${jid}/vertices/${v.id}/metrics`)).map((x) => x.id);
        const ids = recordMetricIds(list);
        if (ids.in.length || ids.out.length) found.push({ vid: v.id, ids });
        for (const t of sourceTopics(list)) topics.add(t);
      }
      // Metrics register when the tasks start: look again next poll until the counters show up.
      // Raw values already read stay in recordPrev, so a counter listed again is not counted twice.
      w.recordsListedAt = now;
      if (found.length) w.recordVertices = found;
      if (topics.size) w.sourceTopics = [...topics].sort();
      if (!w.recordVertices) return;
    }
    let grownIn = 0;
    let grownOut = 0;
    for (const { vid, ids } of w.recordVertices) {
      if (!ids.in.length && !ids.out.length) continue;
      const values: MetricValue[] = [];
      for (const chunk of chunkIds([...ids.in, ...ids.out], MAX_GET_CHARS)) {
        values.push(...(await client.get<MetricValue[]>(`/jobs/${jid}/vertices/${vid}/metrics?get=${chunk}`)));
      }
      let prev = w.recordPrev.get(vid);
      if (!prev) w.recordPrev.set(vid, (prev = new Map()));
      grownIn += counterGrowth(prev, values, ids.in);
      grownOut += counterGrowth(prev, values, ids.out);
    }
    if (grownIn > 0) pipeline.records.inc(w.recordLabels.in, grownIn);
    if (grownOut > 0) pipeline.records.inc(w.recordLabels.out, grownOut);
  } catch (err) {
    if (err instanceof FlinkHttpError && err.status === 404) return;
    throw err;
  }
}

/** The KafkaSink's commit time and committables, from the REST metrics of its vertices. */
export async function pollSink(client: FlinkRestClient, flink: FlinkMetrics, jid: string, w: WatchedJob): Promise<void> {
  try {
    if (!w.sinkVertices) {
      const job = await client.get<{ vertices: { id: string }[] }>(`/jobs/${jid}`);
      const found: { vid: string; ids: SinkMetricIds }[] = [];
      for (const v of job.vertices) {
        const list = await client.get<{ id: string }[]>(`/jobs/${jid}/vertices/${v.id}/subtasks/metrics`);
        const ids = sinkMetricIds(list.map((x) => x.id));
        if (ids.successful.length || ids.commitTimeNs.length) found.push({ vid: v.id, ids });
      }
      // Metrics register when the tasks start: look again next poll until a sink shows up.
      if (!found.length) return;
      w.sinkVertices = found;
      // The series exist from here on, also while Flink's REST metrics still show no commit.
      flink.sinkCommitTime.inc(w.labels, 0);
      for (const outcome of ['successful', 'failed']) flink.sinkCommittables.inc({ ...w.labels, outcome }, 0);
    }
    // The writer's KafkaProducer registers its metrics when it is created, which may come after
    // the committables' ones: a vertex seen without them is listed again until they show up
    // (else its commit time would never be read).
    for (const v of w.sinkVertices) {
      if (v.ids.commitTimeNs.length) continue;
      const list = await client.get<{ id: string }[]>(`/jobs/${jid}/vertices/${v.vid}/subtasks/metrics`);
      const ids = sinkMetricIds(list.map((x) => x.id));
      if (ids.commitTimeNs.length) v.ids = ids;
    }
    const l = w.labels;
    for (const { vid, ids } of w.sinkVertices) {
      const all = [...ids.commitTimeNs, ...ids.successful, ...ids.failed, ...ids.pending];
      const values = await client.get<{ id: string; sum?: number }[]>(`/jobs/${jid}/vertices/${vid}/subtasks/metrics?get=${all.map(encodeURIComponent).join(',')}&agg=sum`);
      const sum = (names: string[]) => values.filter((x) => names.includes(x.id)).reduce((a, x) => a + (x.sum ?? 0), 0);
      const grow = (key: string, now: number): number => {
        const d = counterDelta(w.sinkPrev.get(`${vid}:${key}`), now);
        w.sinkPrev.set(`${vid}:${key}`, now);
        return d;
      };
      const commitNs = grow('commit', sum(ids.commitTimeNs));
      if (commitNs > 0) flink.sinkCommitTime.inc(l, commitNs / 1e9);
      flink.sinkCommittables.inc({ ...l, outcome: 'successful' }, grow('successful', sum(ids.successful)));
      flink.sinkCommittables.inc({ ...l, outcome: 'failed' }, grow('failed', sum(ids.failed)));
      flink.sinkPending.set(l, sum(ids.pending));
    }
  } catch (err) {
    if (err instanceof FlinkHttpError && err.status === 404) return;
    throw err;
  }
}
