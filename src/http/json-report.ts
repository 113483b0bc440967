// A service's last report as a JSON route (GET /, `?pretty=1` indents it for people): 503 with what
// is awaited until the first report, then 200 with the report, redacted (src/redact.ts).
import { Router } from 'express';
import { redactValue } from '../redact.js';

export function jsonReportRouter(report: () => unknown, pending: () => string): Router {
  const r = Router();
  r.get('/', (req, res) => {
    const pretty = ['1', 'true', ''].includes(String(req.query.pretty ?? 'no'));
    const send = (status: number, body: unknown) => res.status(status).type('application/json').send(`${JSON.stringify(redactValue(body), null, pretty ? 2 : undefined)}\n`);
    const body = report();
    if (body === undefined) send(503, { status: pending() });
    else send(200, body);
  });
  return r;
}
