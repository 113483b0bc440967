// Renders eoswatch's prom-client Registry in the Prometheus text format (0.0.4), byte for byte what
// prom-client's `registry.metrics()` writes, at a fraction of its cost for large label sets, and
// shares one render among the scrapes that arrive while it runs. It reads the registry through
// prom-client's public API only (beside eoswatch's own SeriesGauge, below): `getMetricsAsArray()` and each metric's `get()` ({ name, help,
// type, values: [{ labels, value, metricName? }] }), and the default labels from eoswatch's own
// record of them (`setDefaultLabels` in src/metrics/registry.ts; prom-client has no public reader).
//
// Where prom-client's time goes for 1,000 partitions × a few gauges (bench/scrape.bench.ts): it
// formats every label set again on every scrape (Object.entries, a regex replace per value), then
// joins arrays of lines. Here the label part of a counter's, gauge's or summary's series
// (`{a="x",b="y"}`) is formatted once per label object: `get()` returns the object passed to
// `set()` / `inc()` / `observe()` as it is, so the same object comes back on every scrape until the
// series is set again with another one (services that rewrite a series on every reading pass the
// same object each time: src/kafka/lso-monitor.ts). A label object must not be changed after it was
// passed to prom-client (prom-client keys the series by its contents at that moment already).
// A histogram's `get()` builds new label objects on every call (`le` and the series' labels in one
// object): those are formatted on every render, as prom-client does; eoswatch's histograms have
// few series.
//
// The large per-partition families (the LSO monitor's, the lag service's) are SeriesGauges
// (src/metrics/series-gauge.ts): Gauges that keep their series' lines and know when one changed.
// Their `get()` is not called (prom-client's get() copies every stored series on every scrape); a
// version of their lines tells whether they changed, and only then is their block made, with only
// the changed lines formatted again (and not kept as a string: the body has its bytes). The body is kept as
// UTF-8 bytes between renders, with where each family's bytes are in it: a family whose text is the
// same as in the last render is copied from the last body, not encoded again, and while no family
// changed every render returns the same bytes (with 20 scrapers, a scrape costs a socket write).
//
// For scrapers that accept it (Prometheus does), the body is also kept gzip-compressed, made once
// per body from one deflate segment per family, so that a change compresses only the families that
// changed (renderGzipBytes).
//
// Collection still runs on every render (`get()` runs the metric's own `collect`), so values are as
// current as with prom-client's renderer. Only the Prometheus content type is written.
import type { Metric, Registry } from 'prom-client';
import { constants as zlibConstants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import { promisify } from 'node:util';
import { defaultLabelsOf, type LabelSet } from './registry.js';
import type { LabelValues as Labels, MetricData } from './samples.js';
import { SeriesGauge, flat, type LineFormat } from './series-gauge.js';

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function escapeString(s: string): string {
  return s.indexOf('\\') < 0 && s.indexOf('\n') < 0 ? s : s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(v: string | number | undefined): string | number | undefined {
  if (typeof v !== 'string') return v;
  const e = escapeString(v);
  return e.indexOf('"') < 0 ? e : e.replace(/"/g, '\\"');
}

/**
 * `{a="x",b="y"}` (or '') of a series' labels and the registry's default labels, in prom-client's
 * order: the series' labels, then the default labels it does not set. `lead` (a histogram's `le`):
 * that label first, then the default labels the series does not set, then the series' other labels
 * (prom-client formats a histogram's bucket label and its series' labels separately).
 */
function labelText(labels: Labels, defaults?: LabelSet, lead?: string): string {
  let out = '';
  const add = (name: string, v: string | number | undefined): void => {
    out += `${out ? ',' : ''}${name}="${escapeLabelValue(v)}"`;
  };
  const own = (skip?: string): void => {
    for (const name in labels) if (name !== skip && has(labels, name)) add(name, labels[name]);
  };
  if (lead === undefined) own();
  else if (has(labels, lead)) add(lead, labels[lead]);
  if (defaults) for (const name in defaults) if (has(defaults, name) && !has(labels, name)) add(name, defaults[name]);
  if (lead !== undefined) own(lead);
  return out ? `{${out}}` : '';
}

function header(name: string, help: string, type: string): string {
  const n = escapeString(name);
  return `# HELP ${n} ${escapeString(help)}\n# TYPE ${n} ${type}`;
}

function valueString(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

const EMPTY: Labels = Object.freeze({});
const NEWLINE = Buffer.from('\n');

/**
 * The zlib level of the gzip body. Measured on eoswatch's bodies (bench/RESULTS.md, scrape notes):
 * level 1 writes 17–20 times fewer bytes than the text at a quarter of the default level's (6)
 * CPU, which writes about 10 % fewer.
 */
const GZIP_LEVEL = 1;
/**
 * Up to this many bytes to compress for a new body, on the event loop (about 2 ms at level 1, less
 * than rendering them took); more, on zlib's thread pool. A hop to the pool costs the scrape that
 * waits for it a wake-up of another thread, which on a busy machine is worth more than compressing
 * what a change of the process metrics or of a few families leaves to do.
 */
const GZIP_ON_LOOP_BYTES = 1 << 20;
const deflateRawAsync = promisify(deflateRaw);
/** A gzip member's header: deflate, no name, no modification time, unknown OS (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** The last deflate block: fixed Huffman codes, final, empty (what zlib writes for Z_FINISH after a flush). */
const DEFLATE_END = Buffer.from([0x03, 0x00]);

/**
 * One family's part of the body as last written: the metric and its text (a SeriesGauge's: the
 * version of its lines; two families without series both have the text '', so the metric is part
 * of the key), and where its bytes are in the body.
 */
interface Piece {
  metric: object;
  key: string | number;
  /** The family's bytes in the body: the newline between families (but before the first), its text and the newline after it. */
  start: number;
  end: number;
  /** The same bytes deflated, once a gzip body was asked for; shared by the pieces of later bodies while the family is unchanged. */
  segment: { deflated?: Promise<Buffer> };
}

/** A render's result: the body and its pieces, the same object while no family changed. */
interface Rendered {
  body: Buffer;
  pieces: readonly Piece[];
  /** The body gzip-compressed, once asked for. */
  gzip?: Promise<Buffer>;
}

/**
 * Deflate options for a piece: a sync flush instead of a final block at its end, so that the
 * segment ends byte-aligned and refers to nothing before it: segments of independent calls, one
 * after the other and then a final empty block, are one valid deflate stream.
 */
const SEGMENT = { level: GZIP_LEVEL, finishFlush: zlibConstants.Z_SYNC_FLUSH };

/**
 * One gzip member of the body from its pieces' segments, deflating the pieces that have none yet
 * (the families that changed since the last gzip body): on the event loop while they are small,
 * else on zlib's thread pool, in parallel.
 */
async function gzipBody(r: Rendered): Promise<Buffer> {
  const { body } = r;
  const pieces = r.pieces.length ? r.pieces : [{ start: 0, end: body.length, segment: {} as Piece['segment'] }];
  let pending = 0;
  for (const p of pieces) if (p.segment.deflated === undefined) pending += p.end - p.start;
  const deflate = pending <= GZIP_ON_LOOP_BYTES ? (b: Buffer) => Promise.resolve(deflateRawSync(b, SEGMENT)) : (b: Buffer) => deflateRawAsync(b, SEGMENT);
  const segments = await Promise.all(pieces.map((p) => (p.segment.deflated ??= deflate(body.subarray(p.start, p.end)))));
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(body), 0);
  trailer.writeUInt32LE(body.length % 2 ** 32, 4);
  return Buffer.concat([GZIP_HEADER, ...segments, DEFLATE_END, trailer]);
}

export class MetricsRenderer {
  /** `{...}` (or '') of a label object with the default labels, formatted once per object. */
  private labelTexts = new WeakMap<object, string>();
  /** The default labels the cached texts were formatted with. */
  private defaultsSeen: LabelSet | undefined;
  /** Each SeriesGauge's line format under the current default labels (the same function while they stay). */
  private lineFormats = new WeakMap<SeriesGauge, LineFormat>();
  /** The last render: the families, in order, and the body they made. */
  private last: Rendered = { body: NEWLINE, pieces: [] };
  private inFlight: Promise<Rendered> | undefined;
  private reusedBodies = 0;

  constructor(private readonly registry: Registry) {}

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Renders whose body was the previous one's bytes, unchanged (no family changed; tests read it). */
  get bodiesReused(): number {
    return this.reusedBodies;
  }

  /**
   * The registry as text. A call made while a render is running gets that render's result: every
   * scrape that arrives during a render shares it instead of queueing a render of its own.
   */
  async render(): Promise<string> {
    return (await this.shared()).body.toString('utf8');
  }

  /** The same as render(), UTF-8: the same bytes for every scrape that shares a render, and across renders while nothing changed. */
  async renderBytes(): Promise<Buffer> {
    return (await this.shared()).body;
  }

  /**
   * renderBytes()' body gzip-compressed (one gzip member, RFC 1952), made once per body and shared
   * by every scrape of that body. Only the families that changed since the last gzip body are
   * compressed again, up to a megabyte on the event loop, more on zlib's thread pool (a change of
   * megabytes does not hold up other requests); the segments are joined between the gzip header
   * and the trailer (CRC-32 and length of the whole text). A scrape that asks while a new body's
   * segments are being compressed waits for them: the body changes between any two scrapes seconds
   * apart (the process metrics are collected once a second), so sending the text meanwhile would
   * send a scraper such as Prometheus the text on nearly every scrape.
   */
  async renderGzipBytes(): Promise<Buffer> {
    const r = await this.shared();
    if (r.gzip === undefined) {
      const gzip = gzipBody(r);
      r.gzip = gzip;
      // A failed compression is tried again by the next scrape that asks.
      gzip.catch(() => {
        if (r.gzip === gzip) r.gzip = undefined;
        for (const p of r.pieces) p.segment.deflated = undefined;
      });
    }
    return r.gzip;
  }

  private shared(): Promise<Rendered> {
    if (this.inFlight) return this.inFlight;
    const p = this.renderNow().finally(() => {
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
   *
   * The body is the one copy of the families' bytes: a family that did not change is copied from
   * the last body into the next, and only the families that changed are encoded.
   */
  private async renderNow(): Promise<Rendered> {
    // Typed by prom-client as MetricObject (without get()); every registered metric is a Metric.
    const metrics = this.registry.getMetricsAsArray() as unknown as Metric[];
    // A SeriesGauge keeps its own text (and has no collect()); every other metric is read through get().
    const data = await Promise.all(metrics.map((m) => (m instanceof SeriesGauge ? undefined : (m.get() as unknown as Promise<MetricData>))));
    const defaults = defaultLabelsOf(this.registry);
    if (defaults !== this.defaultsSeen) {
      this.labelTexts = new WeakMap();
      this.lineFormats = new WeakMap();
      this.defaultsSeen = defaults;
    }
    const last = this.last;
    const keys: (string | number)[] = [];
    /** The text of each family that changed, made when it is encoded (undefined: the same as in the last body). */
    const texts: ((() => string) | undefined)[] = [];
    let changed = metrics.length !== last.pieces.length;
    for (let i = 0; i < metrics.length; i++) {
      const m = metrics[i]!;
      let key: string | number;
      let text: () => string;
      if (m instanceof SeriesGauge) {
        const format = this.lineFormat(m, defaults);
        key = m.linesVersion(format);
        text = () => `${header(m.family.name, m.family.help, 'gauge')}${m.linesText(format)}`;
      } else {
        const block = this.block(data[i]!, defaults);
        key = block;
        text = () => block;
      }
      keys.push(key);
      const before = last.pieces[i];
      if (before !== undefined && before.metric === m && before.key === key) texts.push(undefined);
      else {
        changed = true;
        texts.push(text);
      }
    }
    let r = last;
    if (changed) {
      const parts: Buffer[] = [];
      const pieces: Piece[] = [];
      let at = 0;
      for (let i = 0; i < metrics.length; i++) {
        const text = texts[i];
        const before = last.pieces[i]!;
        const bytes = text === undefined ? last.body.subarray(before.start, before.end) : Buffer.from(`${i > 0 ? '\n' : ''}${text()}\n`, 'utf8');
        parts.push(bytes);
        pieces.push({ metric: metrics[i]!, key: keys[i]!, start: at, end: at + bytes.length, segment: text === undefined ? before.segment : {} });
        at += bytes.length;
      }
      r = { body: parts.length ? Buffer.concat(parts, at) : NEWLINE, pieces };
      this.last = r;
    } else {
      this.reusedBodies++;
    }
    await new Promise<void>((res) => setImmediate(res));
    return r;
  }

  private lineFormat(m: SeriesGauge, defaults: LabelSet | undefined): LineFormat {
    let f = this.lineFormats.get(m);
    if (f === undefined) {
      const name = escapeString(m.family.name);
      f = (labels, value) => `${name}${this.labelsOf(labels, defaults)} ${valueString(value)}`;
      this.lineFormats.set(m, f);
    }
    return f;
  }

  private block(metric: MetricData, defaults: LabelSet | undefined): string {
    const name = escapeString(metric.name);
    let out = header(metric.name, metric.help, metric.type);
    const values = metric.values;
    if (metric.type === 'histogram') {
      // New label objects on every get(): nothing to cache them by.
      for (const v of values) out += `\n${v.metricName ?? name}${labelText(v.labels ?? EMPTY, defaults, 'le')} ${valueString(v.value)}`;
      return out;
    }
    for (const v of values) out += `\n${v.metricName ?? name}${this.labelsOf(v.labels ?? EMPTY, defaults)} ${valueString(v.value)}`;
    return out;
  }

  private labelsOf(labels: Labels, defaults: LabelSet | undefined): string {
    let t = this.labelTexts.get(labels);
    if (t === undefined) {
      // Kept per label object (20,000 at 10,000 partitions with the lag service): one piece, not
      // the tree of cons strings its concatenation made (10 MB of them in a heap snapshot).
      t = flat(labelText(labels, defaults));
      this.labelTexts.set(labels, t);
    }
    return t;
  }
}

const renderers = new WeakMap<Registry, MetricsRenderer>();

/** The one renderer of `registry` (its label cache and in-flight render are shared by every scrape of /metrics). */
export function rendererFor(registry: Registry): MetricsRenderer {
  let r = renderers.get(registry);
  if (!r) {
    r = new MetricsRenderer(registry);
    renderers.set(registry, r);
  }
  return r;
}
