// Reads a running eoswatch over HTTP (/metrics, /readyz, /audit?failing=1) and keeps the previous
// /metrics reading, so that each summary's rates cover the time since the last one.
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import { parsePrometheusText } from '../metrics/text-format.js';
import { summarize, type FailingFinding, type Reading, type StatusSummary } from './summary.js';

export class StatusReader {
  private previous: Reading | undefined;

  constructor(
    readonly url: string,
    private readonly timeoutMs = 5000,
  ) {}

  private async get(path: string): Promise<Response> {
    try {
      return await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      const c = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = c?.code ?? c?.message ?? errorMessage(err);
      throw new EosError(ErrorCodes.EOSWATCH_UNREACHABLE, `cannot reach eoswatch at ${this.url}${path} (${cause})`);
    }
  }

  async read(): Promise<StatusSummary> {
    const res = await this.get('/metrics');
    if (!res.ok) throw new EosError(ErrorCodes.EOSWATCH_UNREACHABLE, `${this.url}/metrics answered ${res.status}`);
    const current: Reading = { atMs: Date.now(), metrics: parsePrometheusText(await res.text()) };
    const readyRes = await this.get('/readyz');
    const readyBody = (await readyRes.json().catch(() => ({}))) as { services?: Record<string, { ready: boolean; detail?: string }> };
    const auditRes = await this.get('/audit?failing=1');
    const audit = auditRes.ok ? ((await auditRes.json()) as { summary?: { critical: number; warning: number }; findings?: FailingFinding[] }) : undefined;
    const summary = summarize({ url: this.url, current, previous: this.previous, ready: { ok: readyRes.ok, services: readyBody.services }, audit });
    this.previous = current;
    return summary;
  }
}
