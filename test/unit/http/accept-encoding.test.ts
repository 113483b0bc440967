// /metrics' content negotiation (src/http/accept-encoding.ts): which Accept-Encoding headers get the
// gzip body. The responses themselves: test/unit/metrics/render.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptsGzip } from '../../../src/http/accept-encoding.js';

test('acceptsGzip: gzip with a q-value above 0, or * failing that, unless identity is preferred', () => {
  const cases: [string | undefined, boolean][] = [
    // What Prometheus (Go's HTTP client) sends, and browsers, curl --compressed, undici.
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['deflate, gzip;q=1.0, *;q=0.5', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['br;q=1, gzip;q=0.001', true],
    ['*', true],
    ['identity;q=0.5, gzip', true],
    ['gzip;q=0.5, identity;q=0.5', true],
    // No header, an empty one, or gzip refused.
    [undefined, false],
    ['', false],
    ['identity', false],
    ['deflate, br', false],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['GZIP;Q=0', false],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['*, gzip;q=0', false],
    ['gzip;q=0.5, identity', false],
    ['gzip;q=x', false],
  ];
  for (const [header, want] of cases) assert.equal(acceptsGzip(header), want, `Accept-Encoding: ${header}`);
});
