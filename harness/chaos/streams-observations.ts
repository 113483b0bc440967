// What eoswatch showed during a Kafka Streams chaos round (harness/chaos/streams-runner.ts), from its
// /metrics scraped every second and the alerts of a live Prometheus: pure, so the rules that turn
// scrapes into observations are tested on their own (test/unit/harness/chaos/streams.test.ts).
import { parsePrometheusText, type Sample } from '../../src/metrics/text-format.js';
import { LingeringWindows, mergeAlerts, type Lingering } from './observed.js';

export interface StreamsObservations {
  /** Longest eos_partition_lso_stuck_seconds of a sink partition. */
  lsoStuckMaxSeconds: number;
  /** Per instance kill: how long its open transaction held the sink's LSO, and when it was aborted. */
  lingering: Lingering[];
  /** Oldest open transaction of the application the coordinator saw (eos_coordinator_oldest_open_transaction_seconds). */
  openTransactionAgeMaxSeconds: number;
  /** Rebalances counted during the round (eos_streams_rebalances_total), and the longest one in progress. */
  rebalances: number;
  rebalanceMaxSeconds: number;
  /** eos_pipeline_up{engine="streams"} 0 seen after the app had been up. */
  appDownSeen: boolean;
  /** Most members of the application's group seen at once (eos_consumer_group_members). */
  membersMax: number;
  /** Transactions of the application decided during the round, by outcome (eos_coordinator_transactions_total). */
  transactions: { committed: number; aborted: number; abortedTimeout: number; fenced: number };
  /** Producers fenced with a transaction open (eos_coordinator_fencings_total). */
  fencings: number;
  /** Largest lag of the application's group to the LSO, summed over partitions (eos_consumer_lag_records). */
  lagMaxRecords: number;
  alertsFired: string[];
  alertsPending: string[];
  /** A live Prometheus evaluated the rules during the round. */
  prometheus: boolean;
}

/** A round's observations before its first scrape. */
export function noStreamsObservations(prometheus: boolean): StreamsObservations {
  return {
    lsoStuckMaxSeconds: 0,
    lingering: [],
    openTransactionAgeMaxSeconds: 0,
    rebalances: 0,
    rebalanceMaxSeconds: 0,
    appDownSeen: false,
    membersMax: 0,
    transactions: { committed: 0, aborted: 0, abortedTimeout: 0, fenced: 0 },
    fencings: 0,
    lagMaxRecords: 0,
    alertsFired: [],
    alertsPending: [],
    prometheus,
  };
}

const OUTCOMES = { committed: 'committed', aborted: 'aborted', abortedTimeout: 'aborted_timeout', fenced: 'fenced' } as const;

/** What one scrape of the round's daemon adds to the observations. */
export class StreamsObservationTracker {
  readonly o: StreamsObservations;
  private readonly lingering = new LingeringWindows();
  private wasUp = false;
  /** Each counter's last value before counting started, and its value then (absent: 0). */
  private readonly latest = new Map<string, number>();
  private base: Map<string, number> | undefined;

  /** `application`: its application.id (the group and the coordinator's application); `pipeline`: its eos_pipeline_up label. */
  constructor(
    private readonly application: string,
    private readonly sinkTopic: string,
    prometheus: boolean,
    private readonly pipeline = application,
  ) {
    this.o = noStreamsObservations(prometheus);
  }

  /**
   * From now on the counters count (rebalances, transactions, fencings): what they added since the
   * last scrape before this call. The runner calls it once the app runs, before the first fault, so
   * the instances' first joins are not the round's rebalances.
   */
  startCounting(): void {
    this.base = new Map(this.latest);
  }

  /** An instance was killed at `at`: from now on, how long the sink's LSO stays held and when it moves again. */
  processKilled(fault: string, at: number): void {
    this.lingering.killed(fault, at);
    this.o.lingering = this.lingering.list;
  }

  /** One scrape of /metrics at `now`. */
  scrape(text: string, now: number): void {
    const samples = parsePrometheusText(text).samples;
    const of = (name: string, pred: (s: Sample) => boolean) => samples.filter((s) => s.name === name && pred(s));
    const max = (list: Sample[]) => list.reduce((m, s) => Math.max(m, s.value), 0);
    const sum = (list: Sample[]) => list.reduce((a, s) => a + s.value, 0);
    const app = (s: Sample) => s.labels.application === this.application;
    const o = this.o;
    const stuck = max(of('eos_partition_lso_stuck_seconds', (s) => s.labels.topic === this.sinkTopic));
    o.lsoStuckMaxSeconds = Math.max(o.lsoStuckMaxSeconds, stuck);
    this.lingering.observe(stuck, now);
    o.lingering = this.lingering.list;
    o.openTransactionAgeMaxSeconds = Math.max(o.openTransactionAgeMaxSeconds, max(of('eos_coordinator_oldest_open_transaction_seconds', app)));
    o.rebalanceMaxSeconds = Math.max(o.rebalanceMaxSeconds, max(of('eos_streams_rebalance_in_progress_seconds', app)));
    const up = of('eos_pipeline_up', (s) => s.labels.pipeline === this.pipeline && s.labels.engine === 'streams')[0]?.value;
    if (up === 1) this.wasUp = true;
    if (up === 0 && this.wasUp) o.appDownSeen = true;
    o.membersMax = Math.max(o.membersMax, max(of('eos_consumer_group_members', (s) => s.labels.group === this.application)));
    o.lagMaxRecords = Math.max(o.lagMaxRecords, sum(of('eos_consumer_lag_records', (s) => s.labels.group === this.application)));
    const counted = (key: string, list: Sample[]): number | undefined => {
      if (!list.length) return undefined;
      const v = sum(list);
      if (!this.base) {
        this.latest.set(key, v);
        return undefined;
      }
      return v - (this.base.get(key) ?? 0);
    };
    o.rebalances = counted('rebalances', of('eos_streams_rebalances_total', app)) ?? o.rebalances;
    o.fencings = counted('fencings', of('eos_coordinator_fencings_total', app)) ?? o.fencings;
    for (const [k, outcome] of Object.entries(OUTCOMES) as [keyof typeof OUTCOMES, string][]) {
      o.transactions[k] = counted(`txn ${outcome}`, of('eos_coordinator_transactions_total', (s) => app(s) && s.labels.outcome === outcome)) ?? o.transactions[k];
    }
  }

  /** Alerts active now in Prometheus: the application's (by its pipeline or application label), and firing ones of no pipeline. */
  alerts(active: { labels: Record<string, string>; state: string }[]): void {
    const { fired, pending } = mergeAlerts({ fired: this.o.alertsFired, pending: this.o.alertsPending }, active, (l) => l.pipeline === this.pipeline || l.application === this.application);
    this.o.alertsFired = fired;
    this.o.alertsPending = pending;
  }
}
