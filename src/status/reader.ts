// Reads a running eoswatch's /status.json: the daemon's own summary, its alert conditions judged
// with their rules' `for:` since the daemon started, rates over its last 60 s (src/status/sampler.ts).
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import type { StatusHistory } from './sampler.js';
import type { StatusSummary } from './summary.js';

export class StatusReader {
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

  /** The summary, with the chart history when `history` (else without it). */
  async read(opts: { history?: boolean } = {}): Promise<StatusSummary & { history?: StatusHistory }> {
    // ?since: a far future time, so that the daemon sends no chart points unless asked for.
    const res = await this.get(opts.history ? '/status.json' : `/status.json?since=${Number.MAX_SAFE_INTEGER}`);
    const body = (await res.json().catch(() => undefined)) as (StatusSummary & { history?: StatusHistory; error?: string }) | undefined;
    if (!res.ok || !body || body.error !== undefined) {
      throw new EosError(ErrorCodes.EOSWATCH_UNREACHABLE, `${this.url}/status.json answered ${res.status}${body?.error ? `: ${body.error}` : ''}`);
    }
    if (!opts.history) delete body.history;
    return { ...body, url: this.url };
  }
}
