// The live status page at `/`: one small HTML page, its script and stylesheet served from here
// (no build step, no CDN), and /status.json: the daemon's last status sample (src/status/sampler.ts),
// i.e. the summary `eoswatch status` prints, the alert conditions pending or firing with their
// rules' `for:`, and the chart history (?since=MS: only the points after MS). The script builds the page with textContent and
// SVG attributes only, never innerHTML: every value it shows is escaped by construction.
import { Router } from 'express';
import type { StatusSampler } from '../status/sampler.js';
import { VERSION } from '../version.js';

export interface StatusPageDeps {
  /** The daemon's status sampler: summary, alert timers and chart history (src/status/sampler.ts). */
  sampler: StatusSampler;
}

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>eoswatch ${VERSION.replace(/[^0-9A-Za-z.+-]/g, '')}</title>
<link rel="stylesheet" href="status/page.css"></head>
<body>
<header><h1>eoswatch</h1><span id="state" class="badge">loading</span>
<nav><a href="metrics">/metrics</a> <a href="healthz">/healthz</a> <a href="readyz">/readyz</a> <a href="audit?pretty=1">/audit</a> <a href="transactions?pretty=1">/transactions</a> <a href="status.json">/status.json</a></nav></header>
<main>
<section id="alerts"><h2>Alerts</h2><ul id="alert-list"><li>none</li></ul></section>
<section class="grid">
  <div class="card"><h2>Pipeline</h2><dl id="pipeline"></dl></div>
  <div class="card"><h2>Canary</h2><dl id="canary"></dl></div>
  <div class="card"><h2>Transactions (cluster)</h2><dl id="transactions"></dl></div>
  <div class="card" id="streams-card" hidden><h2>Kafka Streams</h2><dl id="streams"></dl></div>
  <div class="card"><h2>Records (records/s)</h2><svg id="chart-records" viewBox="0 0 320 120" role="img" aria-label="records in and out per second"></svg><p class="legend"><span class="ok">in</span> <span class="blue">out</span></p></div>
  <div class="card"><h2>Checkpoints (checkpoints/min)</h2><svg id="chart-checkpoints" viewBox="0 0 320 120" role="img" aria-label="checkpoints completed and failed per minute"></svg><p class="legend"><span class="ok">completed</span> <span id="legend-failed" class="neutral">failed</span></p></div>
  <div class="card"><h2>Commit latency (ms)</h2><svg id="chart-latency" viewBox="0 0 320 120" role="img" aria-label="commit latency p50 and p99 in milliseconds"></svg><p class="legend"><span class="ok">p50</span> <span class="warn">p99</span></p></div>
  <div class="card"><h2>Pending checkpoints (checkpoints)</h2><svg id="chart-pending" viewBox="0 0 320 120" role="img" aria-label="pending checkpoints"></svg></div>
  <div class="card"><h2>LSO lag (records)</h2><svg id="chart-lag" viewBox="0 0 320 120" role="img" aria-label="LSO lag in records"></svg></div>
</section>
<section><h2>Audit findings</h2><p id="audit-summary"></p>
<table id="findings"><thead><tr><th>severity</th><th>check</th><th>target</th><th>observed</th><th>fix</th></tr></thead><tbody></tbody></table></section>
<p class="foot">Refreshed every 2 s from <a href="status.json">/status.json</a> (the daemon samples every 5 s and keeps 30 min; rates over the last <span id="window">60 s</span>); <span id="updated"></span></p>
</main>
<script src="status/page.js"></script>
</body></html>
`;

const CSS = `body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{display:flex;gap:1em;align-items:center;padding:.6em 1em;background:#1f2937;color:#fff}
header h1{font-size:1.2em;margin:0} header nav{margin-left:auto} header a{color:#cde;margin-left:.8em}
main{padding:1em;max-width:1200px;margin:auto} h2{font-size:1em;margin:.2em 0 .5em}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:1em}
.card,#alerts,section>table{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em}
#alerts{margin-bottom:1em} dl{display:grid;grid-template-columns:auto 1fr;gap:.2em 1em;margin:0} dt{color:#666} dd{margin:0;font-variant-numeric:tabular-nums}
.badge{padding:.1em .6em;border-radius:1em;background:#888;color:#fff} .badge.healthy{background:#15803d} .badge.pending{background:#b45309} .badge.alerting{background:#b91c1c}
#alert-list li.pending{color:#b45309} #alert-list li.firing{color:#b91c1c;font-weight:bold}
svg{width:100%;height:120px;background:#fafafa} svg text{font-size:9px;fill:#555} .legend span{margin-right:1em} .ok{color:#15803d} .warn{color:#b45309} .bad{color:#b91c1c} .blue{color:#1d4ed8} .neutral{color:#6b7280}
table{border-collapse:collapse;width:100%;margin-top:.5em} th,td{text-align:left;border-bottom:1px solid #eee;padding:.3em;vertical-align:top}
td.critical{color:#b91c1c;font-weight:bold} td.warning{color:#b45309} .foot{color:#666}
`;

export const PAGE_SCRIPT = `'use strict';
(function () {
  var points = [];
  var KEEP = 360;
  var lastAt = -Infinity;
  function el(id) { return document.getElementById(id); }
  function text(node, value) { node.textContent = value === null || value === undefined ? 'n/a' : String(value); return node; }
  function num(x) { return x === null || x === undefined ? 'n/a' : Math.round(x).toLocaleString('en-US'); }
  function ms(x) { return x === null || x === undefined ? 'n/a' : (x >= 1000 ? (x / 1000).toFixed(2) + ' s' : x.toFixed(x < 10 ? 1 : 0) + ' ms'); }
  function dur(s) { s = Math.floor(s); if (s < 60) return s + ' s'; var m = Math.floor(s / 60), r = s % 60; return r ? m + 'm ' + r + 's' : m + 'm'; }
  function state(a) { return a.state === 'pending' ? 'pending ' + dur(a.heldSeconds) + ' of ' + dur(a.forSeconds) : 'firing' + (a.heldSeconds >= 1 ? ' for ' + dur(a.heldSeconds) : ''); }
  function list(id, rows) {
    var dl = el(id);
    while (dl.firstChild) dl.removeChild(dl.firstChild);
    rows.forEach(function (r) {
      var dt = document.createElement('dt'); text(dt, r[0]); dl.appendChild(dt);
      var dd = document.createElement('dd'); text(dd, r[1]); dd.id = id + '-' + r[0].replace(/[^a-z0-9]+/gi, '-').toLowerCase(); dl.appendChild(dd);
    });
  }
  /** A round upper bound for the scale: 1, 2 or 5 times a power of ten. */
  function nice(max) {
    if (!(max > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(max)));
    var f = max / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  function short(x) { return x >= 1e6 ? (x / 1e6) + 'M' : x >= 1e3 ? (x / 1e3) + 'k' : String(x); }
  var SVGNS = 'http://www.w3.org/2000/svg';
  function svgEl(name, attrs, content) {
    var e = document.createElementNS(SVGNS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (content !== undefined) e.textContent = content;
    return e;
  }
  var L = 34, R = 314, T = 6, B = 100;
  /** Lines over time with a time axis (minutes before the newest point) and a value scale. */
  function chart(id, series) {
    var svg = el(id);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var end = points.length ? points[points.length - 1].at : 0;
    var span = Math.min(30 * 60000, Math.max(5 * 60000, points.length ? end - points[0].at : 0));
    var start = end - span;
    var max = 0;
    series.forEach(function (s) { points.forEach(function (p) { var v = s.value(p); if (v !== null && v !== undefined && v > max) max = v; }); });
    var top = nice(max);
    var x = function (at) { return L + (at - start) / span * (R - L); };
    var y = function (v) { return B - v / top * (B - T); };
    svg.appendChild(svgEl('line', { x1: L, y1: B, x2: R, y2: B, stroke: '#999' }));
    svg.appendChild(svgEl('line', { x1: L, y1: T, x2: L, y2: B, stroke: '#999' }));
    [0, top / 2, top].forEach(function (v) {
      svg.appendChild(svgEl('line', { x1: L, y1: y(v), x2: R, y2: y(v), stroke: '#e5e7eb' }));
      svg.appendChild(svgEl('text', { x: L - 3, y: y(v) + 3, 'text-anchor': 'end', class: 'y-tick' }, short(v)));
    });
    var stepMin = span > 10 * 60000 ? 10 : span > 5 * 60000 ? 2 : 1;
    for (var m = 0; m * 60000 <= span; m += stepMin) {
      svg.appendChild(svgEl('text', { x: x(end - m * 60000), y: B + 12, 'text-anchor': m === 0 ? 'end' : 'middle', class: 'x-tick' }, m === 0 ? 'now' : '-' + m + 'm'));
    }
    var drawn = 0;
    series.forEach(function (s) {
      var run = [];
      var flush = function () {
        if (run.length) svg.appendChild(svgEl('polyline', { points: run.join(' '), fill: 'none', stroke: s.color, 'stroke-width': run.length > 1 ? 1.5 : 3, 'stroke-linecap': 'round', class: 'series' }));
        run = [];
      };
      points.forEach(function (p) {
        var v = s.value(p);
        if (v === null || v === undefined || p.at < start) { flush(); return; }
        run.push(x(p.at).toFixed(1) + ',' + y(v).toFixed(1));
        drawn++;
      });
      flush();
    });
    svg.setAttribute('data-points', String(drawn));
  }
  function render(s) {
    if (s.error) { var st0 = el('state'); text(st0, s.error); st0.className = 'badge'; return; }
    (s.history ? s.history.points : []).forEach(function (p) { if (p.at > lastAt) { points.push(p); lastAt = p.at; } });
    while (points.length > KEEP) points.shift();
    var firing = s.alerts.filter(function (a) { return a.state === 'firing'; });
    var pending = s.alerts.filter(function (a) { return a.state === 'pending'; });
    var badge = el('state');
    if (firing.length) { text(badge, firing.length + ' alert' + (firing.length === 1 ? '' : 's') + ' firing' + (pending.length ? ', ' + pending.length + ' pending' : '')); badge.className = 'badge alerting'; }
    else if (s.ready === false) { text(badge, 'not ready'); badge.className = 'badge alerting'; }
    else if (pending.length) { text(badge, pending.length + ' pending'); badge.className = 'badge pending'; }
    else { text(badge, 'healthy'); badge.className = 'badge healthy'; }
    var ul = el('alert-list');
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    if (!s.alerts.length) { var none = document.createElement('li'); text(none, 'none'); ul.appendChild(none); }
    s.alerts.forEach(function (a) {
      var li = document.createElement('li'); li.className = a.state; li.setAttribute('data-alert', a.alert);
      text(li, a.alert + ' (' + state(a) + '): ' + a.detail); ul.appendChild(li);
    });
    var p = s.pipeline;
    var w = s.windowSeconds === null ? '' : ' over ' + Math.round(s.windowSeconds) + ' s';
    var noRecords = p.engine === 'flink' ? 'n/a (not polled from Flink)' : 'n/a';
    list('pipeline', [
      ['pipeline', p.up === null ? 'not running here' : (p.name || '') + (p.up ? ' up' : ' DOWN')],
      ['records in', p.recordsIn === null ? noRecords : num(p.recordsIn) + (p.inPerSecond === null ? '' : ' (' + num(p.inPerSecond) + '/s' + w + ')')],
      ['records out', p.recordsOut === null ? noRecords : num(p.recordsOut) + (p.outPerSecond === null ? '' : ' (' + num(p.outPerSecond) + '/s' + w + ')')],
      ['dead letters', num(p.deadLetters)],
      ['checkpoints', num(p.checkpointsCompleted) + ' completed, ' + num(p.checkpointsFailed) + ' failed'],
      ['pending', num(p.pending)],
      ['commit p50 / p99', p.commitLatencyMs ? ms(p.commitLatencyMs.p50) + ' / ' + ms(p.commitLatencyMs.p99) + w : 'n/a'],
      ['LSO lag', num(s.lso.maxLagRecords) + ' records' + (s.lso.worstPartition ? ' (' + s.lso.worstPartition + ')' : '')],
      ['Kafka', s.kafka.up === null ? 'unknown' : s.kafka.up ? 'up' + (s.kafka.brokers ? ' (' + s.kafka.brokers + ' broker' + (s.kafka.brokers === 1 ? '' : 's') + ')' : '') : 'UNREACHABLE'],
    ]);
    var c = s.canary;
    list('canary', c ? [['sent', num(c.sent)], ['received', num(c.received)], ['duplicates', num(c.duplicates)], ['lost', num(c.lost)], ['out of order', num(c.outOfOrder)], ['wrong value', num(c.wrongValue)]] : [['canary', 'not enabled']]);
    var t = s.transactions;
    var tx = t ? [['transactional ids', num(t.liveIds)], ['open', num(t.open)]] : [['transactions', 'not enabled (transactions.enabled)']];
    if (t) {
      if (t.source !== 'log') tx.push(['source', 'polling the coordinators: outcomes not counted']);
      t.oldestOpen.forEach(function (o, i) { tx.push(['oldest open' + (i ? ' ' + (i + 1) : ''), o.transactionalId + ' (' + o.application + ') ' + ms(o.ageMs)]); });
      t.hanging.forEach(function (h, i) { tx.push(['HANGING' + (i ? ' ' + (i + 1) : ''), h.transactionalId + ' (' + h.application + ') on ' + h.topic + '-' + h.partition + ': ' + ms(h.ageMs) + ', ' + h.heldBack + ' held back, abort ' + h.abortDue]); });
      if (t.hangingTotal > t.hanging.length) tx.push(['more hanging', (t.hangingTotal - t.hanging.length) + ': /transactions']);
    }
    list('transactions', tx);
    var apps = s.streams || [];
    el('streams-card').hidden = s.streams === null || s.streams === undefined;
    if (s.streams) {
      var rows = [];
      if (s.streamsFailure) rows.push(['last reading', 'FAILED: ' + s.streamsFailure + ' (below: the reading before)']);
      apps.forEach(function (a) {
        var name = a.pipeline === a.applicationId ? a.applicationId : a.pipeline + ' (' + a.applicationId + ')';
        var health = a.rebalancingSeconds !== null ? 'REBALANCING for ' + Math.round(a.rebalancingSeconds) + ' s' : a.up ? 'up' : 'DOWN';
        rows.push([name, health + ' (' + a.state + ', ' + a.members + ' member' + (a.members === 1 ? '' : 's') + ')']);
        rows.push([name + ': rebalances', num(a.rebalances) + (a.lastRebalanceSeconds === null ? '' : ' (last ' + a.lastRebalanceSeconds.toFixed(1) + ' s)')]);
        rows.push([name + ': lag (to LSO)', a.lagRecords === null ? 'n/a' : num(a.lagRecords) + ' records']);
      });
      if (!apps.length) rows.push(['applications', 'none found yet']);
      list('streams', rows);
    }
    var anyFailed = points.some(function (h) { return h.failedPerMinute > 0; });
    el('legend-failed').className = anyFailed ? 'bad' : 'neutral';
    chart('chart-records', [{ color: '#15803d', value: function (h) { return h.inPerSecond; } }, { color: '#1d4ed8', value: function (h) { return h.outPerSecond; } }]);
    chart('chart-checkpoints', [{ color: '#15803d', value: function (h) { return h.completedPerMinute; } }, { color: anyFailed ? '#b91c1c' : '#9ca3af', value: function (h) { return h.failedPerMinute; } }]);
    chart('chart-latency', [{ color: '#15803d', value: function (h) { return h.commitP50Ms; } }, { color: '#b45309', value: function (h) { return h.commitP99Ms; } }]);
    chart('chart-pending', [{ color: '#1d4ed8', value: function (h) { return h.pending; } }]);
    chart('chart-lag', [{ color: '#7c3aed', value: function (h) { return h.lsoLag; } }]);
    if (s.history) text(el('window'), s.history.windowSeconds + ' s');
    text(el('audit-summary'), s.audit ? s.audit.critical + ' critical, ' + s.audit.warning + ' warning' : 'the first audit has not finished (or the audit is off)');
    var tbody = el('findings').tBodies[0];
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    (s.audit ? s.audit.failing : []).forEach(function (f) {
      var tr = document.createElement('tr');
      [f.severity, f.check, f.target, f.observed, f.remediation].forEach(function (v, i) {
        var td = document.createElement('td'); text(td, v); if (i === 0) td.className = v; tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    text(el('updated'), 'last sample ' + new Date(s.at).toLocaleTimeString());
  }
  function tick() {
    fetch('status.json' + (points.length ? '?since=' + lastAt : ''), { cache: 'no-store' }).then(function (r) { return r.json(); }).then(render, function () {
      var st = el('state'); text(st, 'eoswatch not reachable'); st.className = 'badge alerting';
    });
  }
  tick();
  setInterval(tick, 2000);
})();
`;

export function statusPageRouter(deps: StatusPageDeps): Router {
  const r = Router();
  r.get('/', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(HTML);
  });
  r.get('/status/page.js', (_req, res) => void res.type('application/javascript').send(PAGE_SCRIPT));
  r.get('/status/page.css', (_req, res) => void res.type('text/css').send(CSS));
  r.get('/status.json', async (req, res) => {
    try {
      if (!deps.sampler.summary()) await deps.sampler.sample();
      const summary = deps.sampler.summary();
      if (!summary) {
        res.status(503).set('Retry-After', '5').json({ error: 'no status sample yet' });
        return;
      }
      const since = Number(req.query.since);
      res.set('Cache-Control', 'no-store').json({ ...summary, history: deps.sampler.history(Number.isFinite(since) ? since : -Infinity) });
    } catch (err) {
      res.status(500).json({ error: (err as Error).message });
    }
  });
  return r;
}
