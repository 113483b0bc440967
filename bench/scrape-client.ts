// The scrapers of bench/scrape.bench.ts, in a process of their own so that they do not share an
// event loop with the benchmark: `concurrency` closed loops (each sends its next GET as soon as the
// previous body has arrived, over its own keep-alive connection) against one URL, for `seconds` or
// until `count` scrapes in all. Asks for gzip as Prometheus does (`--encoding gzip`, the default;
// a gzip body is decompressed, as Prometheus does) or for the text (`--encoding identity`). Prints
// one JSON line: latencies in ms (request sent → last byte of the body, decompressed), errors, the
// last body's bytes (decompressed) and bytes on the wire, and how many bodies came gzip-compressed.
//
//   node --import tsx bench/scrape-client.ts URL CONCURRENCY (--seconds S | --count N) [--encoding gzip|identity]
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string' }, count: { type: 'string' }, encoding: { type: 'string', default: 'gzip' } },
});
if (values.encoding !== 'gzip' && values.encoding !== 'identity') throw new Error('--encoding: gzip or identity');
const headers = { accept: 'text/plain', 'accept-encoding': values.encoding };
const [url, conc] = positionals;
const concurrency = Number(conc);
if (!url || !Number.isInteger(concurrency) || concurrency < 1) throw new Error('usage: scrape-client.ts URL CONCURRENCY (--seconds S | --count N)');
const until = values.seconds ? performance.now() + Number(values.seconds) * 1000 : Infinity;
const count = values.count ? Number(values.count) : Infinity;

const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const latencies: number[] = [];
const errors: string[] = [];
let started = 0;
let bytes = 0;
let wireBytes = 0;
let gzipped = 0;

function scrape(): Promise<void> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(url!, { agent, headers }, (res) => {
      let n = 0;
      let wire = 0;
      const gzip = res.headers['content-encoding'] === 'gzip';
      const fail = (err: Error): void => {
        errors.push(err.message);
        resolve();
      };
      res.on('data', (d: Buffer) => (wire += d.length));
      res.once('error', fail);
      const body = gzip ? res.pipe(createGunzip()) : res;
      if (gzip) body.once('error', fail);
      body.on('data', (d: Buffer) => (n += d.length));
      body.once('end', () => {
        if (res.statusCode === 200) {
          latencies.push(performance.now() - t0);
          bytes = n;
          wireBytes = wire;
          if (gzip) gzipped++;
        } else errors.push(`HTTP ${res.statusCode}`);
        resolve();
      });
    });
    req.once('error', (err) => {
      errors.push(err.message);
      resolve();
    });
    req.end();
  });
}

async function loop(): Promise<void> {
  while (performance.now() < until && started < count) {
    started++;
    await scrape();
  }
}

const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, loop));
const seconds = (performance.now() - t0) / 1000;
agent.destroy();
process.stdout.write(`${JSON.stringify({ latencies, errors: errors.length, firstErrors: errors.slice(0, 5), bytes, wireBytes, gzipped, seconds })}\n`);
