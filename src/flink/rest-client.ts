// GET against a Flink JobManager's REST API over node:http(s) (custom CA, basic auth or bearer
// token, per-request timeout). Several URLs (HA JobManagers) are tried in order; the one that
// answered is tried first next time. Errors name the path, never the credentials.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FlinkConfig } from '../config/types.js';
import { EosError, ErrorCodes } from '../errors.js';

/** A REST URL as it may be shown in logs, metrics and /audit: user info dropped. */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname.replace(/\/$/, '')}`;
}

/** An HTTP error answer of the JobManager (the path and status kept for the caller: a 404 may mean "none"). */
export class FlinkHttpError extends EosError {
  constructor(
    readonly status: number,
    readonly path: string,
  ) {
    super(ErrorCodes.FLINK_API_FAILED, `Flink REST GET ${path}: HTTP ${status}`);
  }
}

export class FlinkRestClient {
  private preferred = 0;
  private readonly ca?: Buffer;
  private readonly authHeader?: string;

  constructor(private readonly config: Pick<FlinkConfig, 'restUrls' | 'requestTimeout' | 'tls' | 'auth'>) {
    if (config.tls.caFile) this.ca = readFileSync(config.tls.caFile);
    const a = config.auth;
    if (a?.bearerToken) this.authHeader = `Bearer ${a.bearerToken}`;
    else if (a?.username) this.authHeader = `Basic ${Buffer.from(`${a.username}:${a.password ?? ''}`).toString('base64')}`;
  }

  /** The URL that answered last, without any user info it may carry. */
  get currentUrl(): string {
    const u = this.config.restUrls[this.preferred];
    return u ? shownUrl(u) : '';
  }

  async get<T>(path: string): Promise<T> {
    const urls = this.config.restUrls;
    let lastErr: Error = new EosError(ErrorCodes.CONFIG_INVALID, 'no Flink REST URL configured');
    for (let i = 0; i < urls.length; i++) {
      const idx = (this.preferred + i) % urls.length;
      try {
        const body = await this.getOne(urls[idx]!, path);
        this.preferred = idx;
        return JSON.parse(body) as T;
      } catch (err) {
        // An HTTP answer comes from a live JobManager: another URL would not know more.
        if (err instanceof FlinkHttpError) throw err;
        lastErr = err as Error;
      }
    }
    throw lastErr;
  }

  /** GET; null when the JobManager answers 404 (e.g. checkpointing disabled for the job). */
  async getOrNull<T>(path: string): Promise<T | null> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if (err instanceof FlinkHttpError && err.status === 404) return null;
      throw err;
    }
  }

  private getOne(base: string, path: string): Promise<string> {
    const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
    const https = url.protocol === 'https:';
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.authHeader) headers.authorization = this.authHeader;
    return new Promise((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        url,
        { method: 'GET', headers, timeout: this.config.requestTimeout, ...(https ? { ca: this.ca, rejectUnauthorized: this.config.tls.rejectUnauthorized } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 400) reject(new FlinkHttpError(res.statusCode ?? 0, path));
            else resolve(Buffer.concat(chunks).toString('utf8'));
          });
        },
      );
      req.on('timeout', () => req.destroy(new EosError(ErrorCodes.FLINK_API_FAILED, `Flink REST GET ${url.origin}${path}: no answer within ${this.config.requestTimeout} ms`)));
      req.on('error', (err) => reject(new EosError(ErrorCodes.FLINK_API_FAILED, `Flink REST GET ${url.origin}${path}: ${err.message}`)));
      req.end();
    });
  }
}
