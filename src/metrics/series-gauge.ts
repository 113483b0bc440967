// A prom-client Gauge that also keeps the text of its series for /metrics (src/metrics/render.ts):
// the large per-partition families (the LSO monitor's, the lag service's: thousands of series,
// most of them unchanged from one reading to the next). It is a Gauge in every other way: it sits in
// the registry, prom-client's `registry.metrics()` and `get()` (the status sampler,
// src/metrics/samples.ts) see the same series and values, and every Gauge method works.
//
// Beside prom-client's own store, it keeps each series' labels, value and formatted line, in
// prom-client's order, keyed as prom-client keys them (the label values by sorted label name;
// a series removed and set again goes last, as in prom-client's store). A change forgets the
// changed series' line and the family's block of lines; the renderer asks for the block
// (`linesText`) and gets the same string back while nothing changed, and otherwise a block in
// which only the forgotten lines were formatted again. Setting a series to the value it has (with
// the same label object) changes nothing. A label object must not be changed after it was passed
// (prom-client keeps it as it is, and so does this).
//
// No `collect`: its series are set by their service, never at scrape time (the renderer does not
// call get() for it).
import { Gauge, type GaugeConfiguration, type LabelValues } from 'prom-client';

interface Series {
  labels: object;
  value: number;
  /** The formatted line; undefined: to be formatted again. */
  line: string | undefined;
}

/** Formats one series' line (without the leading newline), given its labels and value. */
export type LineFormat = (labels: Readonly<Record<string, string | number | undefined>>, value: number) => string;

/**
 * The string as one piece. A string built by concatenation is a tree of V8 cons strings (one per
 * `+`, 32 bytes each); kept for every series of tens of thousands (its line, its key), the trees
 * weighed more than the text (a heap snapshot at 80,000 series: 1.8 million cons strings, 56 MB).
 * A substring is cut from a flattened copy, so the tree becomes garbage.
 */
export const flat = (s: string): string => ` ${s}`.slice(1);

/** The same value as the text writes it (0 and -0 are both written 0). */
const same = (a: number, b: number): boolean => a === b || (Number.isNaN(a) && Number.isNaN(b));

export class SeriesGauge<T extends string = string> extends Gauge<T> {
  /** The family's name and help, as prom-client has them (its typings do not declare them). */
  readonly family: { readonly name: string; readonly help: string };
  private readonly sortedNames: readonly string[];
  private readonly allNames: readonly string[];
  private readonly series = new Map<string, Series>();
  /** Each series by the label object it holds (a service passes the same object on every reading). */
  private byLabels = new WeakMap<object, Series>();
  /** The block of lines as last built; undefined: something changed since. */
  private block: string | undefined;
  /** The format the lines were built with: another one (other default labels) formats every line again. */
  private formatSeen: unknown;
  private built = 0;

  constructor(config: GaugeConfiguration<T>) {
    if (config.collect) throw new Error(`${config.name}: a SeriesGauge is set by its service, it has no collect()`);
    super(config);
    this.family = { name: config.name, help: config.help };
    this.allNames = [...(config.labelNames ?? [])];
    this.sortedNames = [...this.allNames].sort();
    if (this.allNames.length === 0) this.put({}, 0);
  }

  /** Lines formatted since the gauge was made (how much work the renders since did; tests read it). */
  get linesBuilt(): number {
    return this.built;
  }

  /** How many series the gauge has. */
  get size(): number {
    return this.series.size;
  }

  override set(labels: LabelValues<T> | number, value?: number): void {
    if (typeof labels === 'object' && labels !== null) {
      // The series holds this label object and value already, in prom-client's store too: nothing
      // to do (most series of a reading of thousands of partitions).
      const s = this.byLabels.get(labels);
      if (s !== undefined && typeof value === 'number' && same(s.value, value)) return;
    }
    super.set(labels as LabelValues<T>, value as number);
    if (typeof labels === 'object' && labels !== null) this.put(labels, value as number);
    else this.put({}, labels as number);
  }

  override inc(labels?: LabelValues<T> | number, value?: number): void {
    super.inc(labels as LabelValues<T>, value);
    this.delta(labels, value, 1);
  }

  override dec(labels?: LabelValues<T> | number, value?: number): void {
    super.dec(labels as LabelValues<T>, value);
    this.delta(labels, value, -1);
  }

  override reset(): void {
    super.reset();
    // (prom-client's constructor calls reset() before this class' fields exist.)
    if ((this.series as Map<string, Series> | undefined) === undefined) return;
    this.series.clear();
    this.byLabels = new WeakMap();
    this.block = undefined;
    if (this.allNames.length === 0) this.put({}, 0);
  }

  override remove(...args: [LabelValues<T>] | string[]): void {
    super.remove(...(args as string[]));
    const labels: Record<string, unknown> = {};
    if (typeof args[0] === 'object') Object.assign(labels, args[0]);
    else this.allNames.forEach((n, i) => (labels[n] = args[i]));
    const k = this.key(labels);
    const s = this.series.get(k);
    if (s === undefined) return;
    this.series.delete(k);
    this.byLabels.delete(s.labels);
    this.block = undefined;
  }

  /**
   * Every series as `\n<line>`, in prom-client's order ('' without series): the same string as last
   * time while nothing changed and `format` is the same function; otherwise only the lines of
   * changed series are formatted again (every line, for another `format`).
   */
  linesText(format: LineFormat): string {
    if (format !== this.formatSeen) {
      for (const s of this.series.values()) s.line = undefined;
      this.formatSeen = format;
      this.block = undefined;
    }
    if (this.block !== undefined) return this.block;
    let out = '';
    for (const s of this.series.values()) {
      if (s.line === undefined) {
        s.line = flat(format(s.labels as Record<string, string>, s.value));
        this.built++;
      }
      out += `\n${s.line}`;
    }
    this.block = out;
    return out;
  }

  /** prom-client's key of a series: its label values by sorted label name (undefined ones left out). */
  private key(labels: Record<string, unknown>): string {
    let k = '';
    for (const n of this.sortedNames) {
      const v = labels[n];
      if (v !== undefined) k += `${n}:${v as string},`;
    }
    // (Kept as the series' map key: one piece, not the concatenation's tree, which a Map keeps.)
    return flat(k);
  }

  /** As prom-client's set: the entry gets this label object and value (a new series goes last). */
  private put(labels: object, value: number): void {
    const s = this.byLabels.get(labels) ?? this.series.get(this.key(labels as Record<string, unknown>));
    if (s === undefined) {
      const n: Series = { labels, value, line: undefined };
      this.series.set(this.key(labels as Record<string, unknown>), n);
      this.byLabels.set(labels, n);
    } else {
      if (s.labels === labels && same(s.value, value)) return;
      if (s.labels !== labels) {
        this.byLabels.delete(s.labels);
        this.byLabels.set(labels, s);
        s.labels = labels;
      }
      s.value = value;
      s.line = undefined;
    }
    this.block = undefined;
  }

  /** As prom-client's inc/dec: an existing series keeps its label object and adds the delta. */
  private delta(labels: LabelValues<T> | number | undefined, value: number | undefined, sign: 1 | -1): void {
    const withLabels = typeof labels === 'object' && labels !== null;
    const l: object = withLabels ? labels : {};
    const v = (withLabels ? value : labels) ?? 1;
    const d = sign * v;
    const k = this.key(l as Record<string, unknown>);
    const s = this.series.get(k);
    if (s === undefined) {
      const n: Series = { labels: l, value: d, line: undefined };
      this.series.set(k, n);
      this.byLabels.set(l, n);
      this.block = undefined;
      return;
    }
    const next = s.value + d;
    if (same(next, s.value)) return;
    s.value = next;
    s.line = undefined;
    this.block = undefined;
  }
}
