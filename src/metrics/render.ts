// Renders eoswatch's prom-client Registry in the Prometheus text format (0.0.4), byte for byte what
// prom-client's `registry.metrics()` writes, at a fraction of its cost for large label sets, and
// shares one render among the scrapes that arrive while it runs.
//
// Where prom-client's time goes for 1,000 partitions × a few gauges (bench/scrape.bench.ts): it
// formats every label set again on every scrape (Object.entries, a regex replace per value, a
// WeakMap lookup keyed by a fresh `{}` for the missing shared labels), then joins arrays of lines.
// Here the label part of a series (`{a="x",b="y"}`) is formatted once per label object: prom-client
// stores the object passed to `set()` / `inc()` / `observe()` as it is, so the same object comes back
// on every scrape until the series is set again with another one (services that rewrite a series on
// every reading pass the same object each time: src/kafka/lso-monitor.ts). A label object must not
// be changed after it was passed to prom-client (prom-client keys the series by its contents at that
// moment already).
//
// Collection still runs on every render (prom-client's `get()`, with the metric's own `collect`), so
// values are as current as with prom-client's renderer. Only the Prometheus content type is written,
// and default labels (`registry.setDefaultLabels`) are not supported: eoswatch sets none.
import type { Registry } from 'prom-client';

interface Value {
  value: number;
  labels?: Record<string, string | number>;
  metricName?: string;
  sharedLabels?: Record<string, string | number>;
}

interface MetricData {
  name: string;
  help: string;
  type: string;
  values?: Value[];
}

interface RenderableMetric {
  get(): Promise<MetricData> | MetricData;
  getForPromString?(): Promise<MetricData> | MetricData;
}

function escapeString(s: string): string {
  return s.indexOf('\\') < 0 && s.indexOf('\n') < 0 ? s : s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(v: string | number): string | number {
  if (typeof v !== 'string') return v;
  const e = escapeString(v);
  return e.indexOf('"') < 0 ? e : e.replace(/"/g, '\\"');
}

/** `a="x",b="y"` of the labels not in `exclude` (prom-client's formatLabels joined). */
function formatLabels(labels: Record<string, string | number>, exclude?: Record<string, unknown>): string {
  let out = '';
  for (const name in labels) {
    if (!Object.prototype.hasOwnProperty.call(labels, name)) continue;
    if (exclude && Object.prototype.hasOwnProperty.call(exclude, name)) continue;
    out += `${out ? ',' : ''}${name}="${escapeLabelValue(labels[name]!)}"`;
  }
  return out;
}

function valueString(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

interface Rendered {
  text: string;
  bytes: Buffer;
}

export class MetricsRenderer {
  /** `{...}` (or '') of a label object without shared labels, formatted once per object. */
  private readonly labelText = new WeakMap<object, string>();
  /** The shared labels of a histogram series (prom-client passes the series' stored label object). */
  private readonly sharedText = new WeakMap<object, string>();
  private inFlight: Promise<Rendered> | undefined;

  constructor(private readonly registry: Registry) {}

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The registry as text. A call made while a render is running gets that render's result: every
   * scrape that arrives during a render shares it instead of queueing a render of its own.
   */
  async render(): Promise<string> {
    return (await this.shared()).text;
  }

  /** The same as render(), UTF-8 encoded once per render for every scrape that shares it. */
  async renderBytes(): Promise<Buffer> {
    return (await this.shared()).bytes;
  }

  private shared(): Promise<Rendered> {
    if (this.inFlight) return this.inFlight;
    const p = this.renderNow()
      .then((text) => ({ text, bytes: Buffer.from(text, 'utf8') }))
      .finally(() => {
        if (this.inFlight === p) this.inFlight = undefined;
      });
    this.inFlight = p;
    return p;
  }

  /**
   * Ends with one turn of the event loop before the result goes out. A render of thousands of
   * series is milliseconds of synchronous work, during which the event loop reads no request: the
   * scrapes that came in meanwhile are read in that turn and share this render instead of each
   * rendering again after it (they get values at most one render old, as with any shared render).
   */
  private async renderNow(): Promise<string> {
    const metrics = this.registry.getMetricsAsArray() as unknown as RenderableMetric[];
    const data = await Promise.all(metrics.map((m) => (typeof m.getForPromString === 'function' ? m.getForPromString() : m.get())));
    let out = '';
    for (let i = 0; i < data.length; i++) {
      if (i > 0) out += '\n\n';
      out += this.block(data[i]!);
    }
    await new Promise<void>((r) => setImmediate(r));
    return `${out}\n`;
  }

  private block(metric: MetricData): string {
    const name = escapeString(metric.name);
    let out = `# HELP ${name} ${escapeString(metric.help)}\n# TYPE ${name} ${metric.type}`;
    for (const v of metric.values ?? []) {
      out += `\n${v.metricName ?? name}${this.labelsOf(v)} ${valueString(v.value)}`;
    }
    return out;
  }

  private labelsOf(v: Value): string {
    const labels = v.labels ?? {};
    const shared = v.sharedLabels;
    if (!shared) {
      let t = this.labelText.get(labels);
      if (t === undefined) {
        const f = formatLabels(labels);
        t = f ? `{${f}}` : '';
        this.labelText.set(labels, t);
      }
      return t;
    }
    // Histogram buckets, sum and count: the bucket's own labels (le) first, then the series' labels.
    const own = formatLabels(labels, shared);
    let s = this.sharedText.get(shared);
    if (s === undefined) {
      s = formatLabels(shared);
      this.sharedText.set(shared, s);
    }
    const all = own && s ? `${own},${s}` : own || s;
    return all ? `{${all}}` : '';
  }
}

const renderers = new WeakMap<Registry, MetricsRenderer>();

/** The one renderer of `registry` (its label cache and in-flight render are shared by /metrics and the status page). */
export function rendererFor(registry: Registry): MetricsRenderer {
  let r = renderers.get(registry);
  if (!r) {
    r = new MetricsRenderer(registry);
    renderers.set(registry, r);
  }
  return r;
}
