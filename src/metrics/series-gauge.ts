// A prom-client Gauge that also keeps the text of its series for /metrics (src/metrics/render.ts):
// the large per-partition families (the LSO monitor's, the lag service's: thousands of series,
// most of them unchanged from one reading to the next). It is a Gauge in every other way: it sits in
// the registry, prom-client's `registry.metrics()` and `get()` (the status sampler,
// src/metrics/samples.ts) see the same series and values as of a plain Gauge given the same calls,
// and every Gauge method works, with prom-client's errors for a value that is not a number or a
// label the gauge does not have.
//
// It keeps its series in one store of its own, not in prom-client's (`hashMap`, left empty: at
// tens of thousands of series a second copy of every series, its entry and its key, weighed
// megabytes). Each series has its labels, value and formatted line, in prom-client's order, keyed
// as prom-client keys them (the label values by sorted label name, one string per label object
// for every gauge it is passed to; a series removed and set again goes last, as in prom-client's
// store); `get()` answers from it, with a `{ value, labels }` per series as a plain Gauge's. A
// change forgets the changed series' line and counts a version of the family; the renderer asks
// for the version (`linesVersion`), and only when it differs from the one whose bytes it has, for
// the block of lines (`linesText`), in which only the forgotten lines are formatted again. The
// block is not kept here: the renderer's body holds its bytes, and a kept block was a tree of
// cons strings over the lines (160,000 of them at 80,000 series, 5 MB: bench/RESULTS.md).
// Setting a series to the value it has (with the same label object) changes nothing. A label
// object must not be changed after it was passed (prom-client keeps it as it is, and so does this
// one, and its key).
//
// No `collect`: its series are set by their service, never at scrape time (the renderer does not
// call get() for it).
import { inspect, format as formatValue } from 'node:util';
import { Gauge, type Aggregator, type GaugeConfiguration, type LabelValues, type MetricType, type MetricValue } from 'prom-client';

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

/**
 * Each label object's key, shared by the gauges it is passed to: the lag service passes one object
 * to five families, the LSO monitor one to three, and each family's store keeps the same string
 * instead of one string of its own (at 10,000 partitions 80,000 keys become 20,000). The key does
 * not depend on the gauge: a label object a gauge accepts has only labels of the gauge, and its key
 * is its labels with a value, by sorted name.
 */
const keys = new WeakMap<object, string>();

export class SeriesGauge<T extends string = string> extends Gauge<T> {
  /** The family's name and help, as prom-client has them (its typings do not declare them). */
  readonly family: { readonly name: string; readonly help: string };
  private readonly sortedNames: readonly string[];
  private readonly allNames: readonly string[];
  private readonly series = new Map<string, Series>();
  /** Counts the changes of the family's lines (linesVersion). */
  private version = 0;
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
    const withLabels = typeof labels === 'object' && labels !== null;
    const l: object = withLabels ? labels : {};
    const v = withLabels ? value : labels;
    // The series holds this label object and value already: nothing to do (most series of a
    // reading of thousands of partitions; the object was checked when it was first set).
    const k = keys.get(l);
    const s = k === undefined ? undefined : this.series.get(k);
    if (s !== undefined && s.labels === l && typeof v === 'number' && same(s.value, v)) return;
    if (typeof v !== 'number') throw new TypeError(`Value is not a valid number: ${formatValue(v)}`);
    this.check(l);
    this.put(l, v);
  }

  override inc(labels?: LabelValues<T> | number, value?: number): void {
    this.delta(labels, value, 1);
  }

  override dec(labels?: LabelValues<T> | number, value?: number): void {
    this.delta(labels, value, -1);
  }

  override reset(): void {
    // prom-client's store stays empty: every series is in this one.
    (this as unknown as { hashMap: object }).hashMap = {};
    // (prom-client's constructor calls reset() before this class' fields exist.)
    if ((this.series as Map<string, Series> | undefined) === undefined) return;
    this.series.clear();
    this.version++;
    if (this.allNames.length === 0) this.put({}, 0);
  }

  override remove(...args: [LabelValues<T>] | string[]): void {
    let labels: Record<string, unknown>;
    if (typeof args[0] === 'object') labels = args[0];
    else {
      if (args.length !== this.allNames.length) {
        throw new Error(
          `Invalid number of arguments (${args.length}): "${args.join(', ')}" for label names (${this.allNames.length}): "${this.allNames.join(', ')}".`,
        );
      }
      labels = {};
      this.allNames.forEach((n, i) => (labels[n] = args[i]));
    }
    this.check(labels);
    const k = this.key(labels);
    const s = this.series.get(k);
    if (s === undefined) return;
    this.series.delete(k);
    this.version++;
  }

  /** As a plain Gauge's: each series as `{ value, labels }`, in prom-client's order. */
  override async get(): ReturnType<Gauge<T>['get']> {
    const values: MetricValue<T>[] = new Array<MetricValue<T>>(this.series.size);
    let i = 0;
    for (const s of this.series.values()) values[i++] = { value: s.value, labels: s.labels as LabelValues<T> };
    const self = this as unknown as { help: string; name: string; type: MetricType; aggregator: Aggregator };
    // (prom-client's typings declare a `collect` in get()'s answer; a Gauge's has none.)
    const data = { help: self.help, name: self.name, type: self.type, values, aggregator: self.aggregator };
    return data as Awaited<ReturnType<Gauge<T>['get']>>;
  }

  /** prom-client's reader of one series' value (0 without it), from this store. */
  _getValue(labels?: object): number {
    // (Not checked, as in prom-client: the key is not kept for a label object no store holds.)
    return this.series.get(this.key((labels ?? {}) as Record<string, unknown>, false))?.value ?? 0;
  }

  /**
   * The version of the lines `format` makes: the same number while nothing changed and `format` is
   * the same function, another one after any change (another `format` forgets every line).
   */
  linesVersion(format: LineFormat): number {
    if (format !== this.formatSeen) {
      for (const s of this.series.values()) s.line = undefined;
      this.formatSeen = format;
      this.version++;
    }
    return this.version;
  }

  /**
   * Every series as `\n<line>`, in prom-client's order ('' without series), only the lines of
   * changed series formatted again (every line, for another `format`). Not kept: made for the
   * renderer when the version changed.
   */
  linesText(format: LineFormat): string {
    this.linesVersion(format);
    let out = '';
    for (const s of this.series.values()) {
      if (s.line === undefined) {
        s.line = flat(format(s.labels as Record<string, string>, s.value));
        this.built++;
      }
      out += `\n${s.line}`;
    }
    return out;
  }

  /**
   * prom-client's key of a series: its label values by sorted label name (undefined ones left out);
   * kept per label object (see `keys`) once the object was checked (`keep`).
   */
  private key(labels: Record<string, unknown>, keep = true): string {
    const known = keys.get(labels);
    if (known !== undefined) return known;
    let k = '';
    for (const n of this.sortedNames) {
      const v = labels[n];
      if (v !== undefined) k += `${n}:${v as string},`;
    }
    // (Kept as the series' map key: one piece, not the concatenation's tree, which a Map keeps.)
    if (!keep) return k;
    k = flat(k);
    keys.set(labels, k);
    return k;
  }

  /** As prom-client's set: the entry gets this label object and value (a new series goes last). */
  private put(labels: object, value: number): void {
    const k = this.key(labels as Record<string, unknown>);
    const s = this.series.get(k);
    if (s === undefined) {
      this.series.set(k, { labels, value, line: undefined });
    } else {
      if (s.labels === labels && same(s.value, value)) return;
      if (s.labels !== labels) s.labels = labels;
      s.value = value;
      s.line = undefined;
    }
    this.version++;
  }

  /** As prom-client's inc/dec: an existing series keeps its label object and adds the delta. */
  private delta(labels: LabelValues<T> | number | undefined, value: number | undefined, sign: 1 | -1): void {
    const withLabels = typeof labels === 'object' && labels !== null;
    const l: object = withLabels ? labels : {};
    const v = (withLabels ? value : labels) ?? 1;
    // (prom-client negates before it checks: a decrement by a numeric string is a number.)
    const d: unknown = sign === 1 ? v : -v;
    if (typeof d !== 'number') throw new TypeError(`Delta is not a valid number: ${formatValue(d)}`);
    this.check(l);
    const k = this.key(l as Record<string, unknown>);
    const s = this.series.get(k);
    if (s === undefined) {
      this.series.set(k, { labels: l, value: d, line: undefined });
      this.version++;
      return;
    }
    const next = s.value + d;
    if (same(next, s.value)) return;
    s.value = next;
    s.line = undefined;
    this.version++;
  }

  /** prom-client's check of a label object: every label one of the gauge's. */
  private check(labels: object): void {
    for (const label in labels) {
      if (!this.allNames.includes(label)) {
        throw new Error(`Added label "${label}" is not included in initial labelset: ${inspect(this.allNames)}`);
      }
    }
  }
}
