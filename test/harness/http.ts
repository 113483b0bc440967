// One HTTP(S) request at a time, for tests of eoswatch's HTTP server: a fresh connection per
// request (so that each carries its own client certificate), optional basic auth.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a fresh connection (so that each carries its own client certificate). */
export function send(url: string, opts: { method?: string; auth?: string; ca?: string; cert?: string; key?: string } = {}): Promise<Reply> {
  const u = new URL(url);
  const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, {
    method: opts.method ?? 'GET',
    agent: false,
    headers: opts.auth ? { authorization: `Basic ${Buffer.from(opts.auth).toString('base64')}` } : {},
    ...(u.protocol === 'https:' ? { ca: opts.ca, cert: opts.cert, key: opts.key, servername: 'localhost' } : {}),
  });
  return new Promise((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.end();
  });
}
