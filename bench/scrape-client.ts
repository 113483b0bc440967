// The scrapers of bench/scrape.bench.ts, in a process of their own so that they do not share an
// event loop with the benchmark: `concurrency` closed loops (each sends its next GET as soon as the
// previous body has arrived, over its own keep-alive connection) against one URL, for `seconds` or
// until `count` scrapes in all. Asks for gzip as Prometheus does (`--encoding gzip`, the default)
// or for the text (`--encoding identity`). A gzip body is counted, not decompressed per scrape
// (Prometheus decompresses on its own machine; here it would take the daemon's second core, and
// the benchmark measure the scrapers); the last one is decompressed once, for its size and to
// check it. Prints one JSON line: latencies in ms (request sent → last byte of the body), errors,
// the last body's bytes (decompressed) and bytes on the wire, how many bodies came gzip-compressed.
//
//   node --import tsx bench/scrape-client.ts URL CONCURRENCY (--seconds S | --count N) [--encoding gzip|identity]
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';

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
let lastGzip: Buffer[] | undefined;

function scrape(): Promise<void> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(url!, { agent, headers }, (res) => {
      let n = 0;
      const gzip = res.headers['content-encoding'] === 'gzip';
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => {
        n += d.length;
        if (gzip) chunks.push(d);
      });
      res.once('end', () => {
        if (res.statusCode === 200) {
          latencies.push(performance.now() - t0);
          bytes = wireBytes = n;
          if (gzip) {
            gzipped++;
            lastGzip = chunks;
          } else lastGzip = undefined;
        } else errors.push(`HTTP ${res.statusCode}`);
        resolve();
      });
      res.once('error', (err) => {
        errors.push(err.message);
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
// (A body that does not decompress throws: the run fails.)
if (lastGzip) bytes = gunzipSync(Buffer.concat(lastGzip)).length;
process.stdout.write(`${JSON.stringify({ latencies, errors: errors.length, firstErrors: errors.slice(0, 5), bytes, wireBytes, gzipped, seconds })}\n`);
