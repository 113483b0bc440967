// Content negotiation of /metrics' encoding: whether a request's Accept-Encoding lets the gzip body
// be sent (RFC 9110 §12.5.3). Prometheus sends `Accept-Encoding: gzip` on every scrape.

/**
 * True when `header` accepts gzip: `gzip` (or `x-gzip`) with a q-value above 0, or failing that
 * `*` with one, and no `identity` listed with a higher q-value. No header (or an empty one): false,
 * the text as it is (what clients that do not ask expect, although the RFC would allow any coding).
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  if (header === 'gzip') return true;
  let gzip: number | undefined;
  let any: number | undefined;
  let identity: number | undefined;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.split(';');
    const name = coding.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=(.*)$/i.exec(p);
      // An unreadable q-value counts as 0.
      if (m) q = Number(m[1]!.trim()) || 0;
    }
    if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip ?? 0, q);
    else if (name === '*') any = q;
    else if (name === 'identity') identity = q;
  }
  const q = gzip ?? any ?? 0;
  return q > 0 && (identity === undefined || q >= identity);
}
