// The transactions service's series per application (src/metrics/transactions.ts): set from what
// each pass found, removed when an application goes away or a pass cannot read the coordinator,
// and at most topN named hanging transactions. The counters and histograms of outcomes are the
// service's (transactions-service.ts count()); this keeps the label sets the gauges hold.
import { TRANSACTION_OUTCOMES, type TransactionsMetrics } from '../metrics/transactions.js';
import type { ApplicationNamer } from './applications.js';
import type { HangingTransaction, OpenTransaction } from './hanging.js';

/** A live transactional id and its client transaction version (null when polled: the poll does not say). */
export type LiveId = readonly [transactionalId: string, version: number | null];

export class TransactionsSeries {
  /** Label sets with series, to remove those that went away. */
  private readonly apps = new Set<string>();
  /** Applications whose counters exist (from 0). */
  private readonly counted = new Set<string>();
  private readonly versionLabels = new Set<string>();
  private readonly infoLabels = new Map<string, Record<string, string>>();

  constructor(
    private readonly metrics: TransactionsMetrics,
    private readonly namer: ApplicationNamer,
    private readonly topN: number,
  ) {}

  private application(transactionalId: string | null): string {
    return transactionalId === null ? '(unknown)' : this.namer.name(transactionalId).application;
  }

  /** Removes every gauge series of the last pass (the counters and histograms stay: they are totals). */
  forget(): void {
    const m = this.metrics;
    for (const a of this.apps) for (const g of [m.open, m.oldestOpen, m.ids, m.hanging]) g.remove({ application: a });
    this.apps.clear();
    for (const k of this.versionLabels) {
      const [application, version] = k.split('\u0000') as [string, string];
      m.versions.remove({ application, version });
    }
    this.versionLabels.clear();
    for (const labels of this.infoLabels.values()) m.hangingInfo.remove(labels);
    this.infoLabels.clear();
  }

  /** The series of a pass: per application its live ids, versions, open and hanging transactions; the topN oldest hanging ones named. */
  export(ids: readonly LiveId[], open: readonly OpenTransaction[], hanging: readonly HangingTransaction[], now: number): void {
    const m = this.metrics;
    const perApp = new Map<string, { open: number; oldest: number; ids: number; hanging: number; versions: Map<number, number> }>();
    const app = (a: string) => {
      let e = perApp.get(a);
      if (!e) perApp.set(a, (e = { open: 0, oldest: 0, ids: 0, hanging: 0, versions: new Map() }));
      return e;
    };
    for (const [id, version] of ids) {
      const e = app(this.application(id));
      e.ids++;
      if (version !== null) e.versions.set(version, (e.versions.get(version) ?? 0) + 1);
    }
    for (const t of open) {
      const e = app(this.application(t.transactionalId));
      e.open++;
      e.oldest = Math.max(e.oldest, (now - t.startTimestampMs) / 1000);
    }
    for (const h of hanging) app(this.application(h.transactionalId)).hanging++;
    const versionsNow = new Set<string>();
    for (const [application, e] of perApp) {
      if (!this.counted.has(application)) {
        // Counters from 0 at the first sight of an application: increase() and rate() then see
        // its first transactions, and the dashboard's fencing panel has a series before any fencing.
        this.counted.add(application);
        for (const outcome of TRANSACTION_OUTCOMES) m.outcomes.inc({ application, outcome }, 0);
        m.fencings.inc({ application }, 0);
      }
      m.open.set({ application }, e.open);
      m.oldestOpen.set({ application }, Math.max(0, e.oldest));
      m.ids.set({ application }, e.ids);
      m.hanging.set({ application }, e.hanging);
      for (const [v, n] of e.versions) {
        m.versions.set({ application, version: String(v) }, n);
        versionsNow.add(`${application}\u0000${v}`);
      }
    }
    for (const a of this.apps) {
      if (perApp.has(a)) continue;
      m.open.remove({ application: a });
      m.oldestOpen.remove({ application: a });
      m.ids.remove({ application: a });
      m.hanging.remove({ application: a });
    }
    this.apps.clear();
    for (const a of perApp.keys()) this.apps.add(a);
    for (const k of this.versionLabels) {
      if (versionsNow.has(k)) continue;
      const [application, version] = k.split('\u0000') as [string, string];
      m.versions.remove({ application, version });
    }
    this.versionLabels.clear();
    for (const k of versionsNow) this.versionLabels.add(k);
    m.overflowed.set(this.namer.overflowed);

    // The info series: at most topN, the oldest hanging transactions (findHanging sorts them).
    const info = new Map<string, Record<string, string>>();
    for (const h of hanging.slice(0, this.topN)) {
      const labels = { application: this.application(h.transactionalId), topic: h.topic, partition: String(h.partition), transactional_id: h.transactionalId ?? `(producer ${h.producerId})` };
      const key = Object.values(labels).join('\u0000');
      info.set(key, labels);
      m.hangingInfo.set(labels, h.ageMs / 1000);
    }
    for (const [k, labels] of this.infoLabels) if (!info.has(k)) m.hangingInfo.remove(labels);
    this.infoLabels.clear();
    for (const [k, v] of info) this.infoLabels.set(k, v);
  }
}
