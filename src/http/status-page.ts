// The live status page at `/`: one small HTML page, its script and stylesheet served from here
// (no build step, no CDN), and /status.json, the same summary as `eoswatch status`
// (src/status/summary.ts) computed in-process. The script builds the page with textContent and
// SVG attributes only, never innerHTML: every value it shows is escaped by construction.
import { Router } from 'express';
import type { Registry } from 'prom-client';
import { sortFindings } from '../audit/report.js';
import type { AuditReport } from '../audit/runner.js';
import { rendererFor } from '../metrics/render.js';
import { parsePrometheusText } from '../metrics/text-format.js';
import { summarize, type Reading } from '../status/summary.js';
import { VERSION } from '../version.js';
import type { Readiness } from './server.js';

export interface StatusPageDeps {
  registry: Registry;
  readiness(): Readiness;
  audit?(): AuditReport | undefined;
}

/** Rates cover at least this long: readings closer together are too noisy. */
const MIN_WINDOW_MS = 4000;

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>eoswatch ${VERSION.replace(/[^0-9A-Za-z.+-]/g, '')}</title>
<link rel="stylesheet" href="status/page.css"></head>
<body>
<header><h1>eoswatch</h1><span id="state" class="badge">loading</span>
<nav><a href="metrics">/metrics</a> <a href="healthz">/healthz</a> <a href="readyz">/readyz</a> <a href="audit?pretty=1">/audit</a> <a href="status.json">/status.json</a></nav></header>
<main>
<section id="alerts"><h2>Alerts</h2><ul id="alert-list"><li>none</li></ul></section>
<section class="grid">
  <div class="card"><h2>Pipeline</h2><dl id="pipeline"></dl></div>
  <div class="card"><h2>Canary</h2><dl id="canary"></dl></div>
  <div class="card"><h2>Checkpoints per refresh</h2><svg id="chart-checkpoints" viewBox="0 0 300 80" role="img" aria-label="checkpoints completed and failed"></svg><p class="legend"><span class="ok">completed</span> <span class="bad">failed</span></p></div>
  <div class="card"><h2>Commit latency (ms)</h2><svg id="chart-latency" viewBox="0 0 300 80" role="img" aria-label="commit latency p50 and p99"></svg><p class="legend"><span class="ok">p50</span> <span class="warn">p99</span></p></div>
  <div class="card"><h2>Pending checkpoints</h2><svg id="chart-pending" viewBox="0 0 300 80" role="img" aria-label="pending checkpoints"></svg></div>
  <div class="card"><h2>LSO lag (records)</h2><svg id="chart-lag" viewBox="0 0 300 80" role="img" aria-label="LSO lag"></svg></div>
</section>
<section><h2>Audit findings</h2><p id="audit-summary"></p>
<table id="findings"><thead><tr><th>severity</th><th>check</th><th>target</th><th>observed</th><th>fix</th></tr></thead><tbody></tbody></table></section>
<p class="foot">Refreshed every 2 s from <a href="status.json">/status.json</a>; <span id="updated"></span></p>
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
.badge{padding:.1em .6em;border-radius:1em;background:#888;color:#fff} .badge.healthy{background:#15803d} .badge.alerting{background:#b91c1c}
svg{width:100%;height:80px;background:#fafafa} .legend span{margin-right:1em} .ok{color:#15803d} .warn{color:#b45309} .bad{color:#b91c1c}
table{border-collapse:collapse;width:100%;margin-top:.5em} th,td{text-align:left;border-bottom:1px solid #eee;padding:.3em;vertical-align:top}
td.critical{color:#b91c1c;font-weight:bold} td.warning{color:#b45309} .foot{color:#666}
`;

const JS = `'use strict';
(function () {
  var history = [];
  var MAX = 60;
  function el(id) { return document.getElementById(id); }
  function text(node, value) { node.textContent = value === null || value === undefined ? 'n/a' : String(value); return node; }
  function num(x) { return x === null || x === undefined ? 'n/a' : Math.round(x).toLocaleString('en-US'); }
  function ms(x) { return x === null || x === undefined ? 'n/a' : (x >= 1000 ? (x / 1000).toFixed(2) + ' s' : x.toFixed(x < 10 ? 1 : 0) + ' ms'); }
  function list(id, rows) {
    var dl = el(id);
    while (dl.firstChild) dl.removeChild(dl.firstChild);
    rows.forEach(function (r) {
      var dt = document.createElement('dt'); text(dt, r[0]); dl.appendChild(dt);
      var dd = document.createElement('dd'); text(dd, r[1]); dd.id = id + '-' + r[0].replace(/[^a-z0-9]+/gi, '-').toLowerCase(); dl.appendChild(dd);
    });
  }
  var SVGNS = 'http://www.w3.org/2000/svg';
  function chart(id, series) {
    var svg = el(id);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var max = 1;
    series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null && v > max) max = v; }); });
    series.forEach(function (s) {
      var pts = [];
      s.values.forEach(function (v, i) { if (v !== null) pts.push((i * 300 / (MAX - 1)).toFixed(1) + ',' + (78 - v / max * 74).toFixed(1)); });
      var line = document.createElementNS(SVGNS, 'polyline');
      line.setAttribute('points', pts.join(' '));
      line.setAttribute('fill', 'none');
      line.setAttribute('stroke', s.color);
      line.setAttribute('stroke-width', '2');
      svg.appendChild(line);
    });
    var label = document.createElementNS(SVGNS, 'text');
    label.setAttribute('x', '4'); label.setAttribute('y', '12'); label.setAttribute('font-size', '10');
    label.textContent = 'max ' + num(max);
    svg.appendChild(label);
  }
  function render(s) {
    var prev = history.length ? history[history.length - 1] : null;
    history.push(s);
    if (history.length > MAX) history.shift();
    var state = el('state');
    var healthy = s.alerts.length === 0 && s.ready !== false;
    text(state, healthy ? 'healthy' : s.alerts.length + ' alert condition(s)');
    state.className = 'badge ' + (healthy ? 'healthy' : 'alerting');
    var ul = el('alert-list');
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    (s.alerts.length ? s.alerts : [{ alert: 'none', detail: '' }]).forEach(function (a) {
      var li = document.createElement('li'); text(li, a.detail ? a.alert + ': ' + a.detail : a.alert); ul.appendChild(li);
    });
    var p = s.pipeline;
    list('pipeline', [
      ['pipeline', p.up === null ? 'not running here' : (p.name || '') + (p.up ? ' up' : ' DOWN')],
      ['records in', num(p.recordsIn) + (p.inPerSecond === null ? '' : ' (' + num(p.inPerSecond) + '/s)')],
      ['records out', num(p.recordsOut) + (p.outPerSecond === null ? '' : ' (' + num(p.outPerSecond) + '/s)')],
      ['dead letters', num(p.deadLetters)],
      ['checkpoints', num(p.checkpointsCompleted) + ' completed, ' + num(p.checkpointsFailed) + ' failed'],
      ['pending', num(p.pending)],
      ['commit p50 / p99', p.commitLatencyMs ? ms(p.commitLatencyMs.p50) + ' / ' + ms(p.commitLatencyMs.p99) : 'n/a'],
      ['LSO lag', num(s.lso.maxLagRecords) + ' records' + (s.lso.worstPartition ? ' (' + s.lso.worstPartition + ')' : '')],
      ['Kafka', s.kafka.up === null ? 'unknown' : s.kafka.up ? 'up' + (s.kafka.brokers ? ' (' + s.kafka.brokers + ' brokers)' : '') : 'UNREACHABLE'],
    ]);
    var c = s.canary;
    list('canary', c ? [['sent', num(c.sent)], ['received', num(c.received)], ['duplicates', num(c.duplicates)], ['lost', num(c.lost)], ['out of order', num(c.outOfOrder)], ['wrong value', num(c.wrongValue)]] : [['canary', 'not enabled']]);
    var done = prev ? Math.max(0, p.checkpointsCompleted - prev.pipeline.checkpointsCompleted) : null;
    var failed = prev ? Math.max(0, p.checkpointsFailed - prev.pipeline.checkpointsFailed) : null;
    s._done = done; s._failed = failed;
    var pad = function (f) { var v = history.map(f); while (v.length < MAX) v.unshift(null); return v; };
    chart('chart-checkpoints', [{ color: '#15803d', values: pad(function (h) { return h._done; }) }, { color: '#b91c1c', values: pad(function (h) { return h._failed; }) }]);
    chart('chart-latency', [
      { color: '#15803d', values: pad(function (h) { return h.pipeline.commitLatencyMs ? h.pipeline.commitLatencyMs.p50 : null; }) },
      { color: '#b45309', values: pad(function (h) { return h.pipeline.commitLatencyMs ? h.pipeline.commitLatencyMs.p99 : null; }) },
    ]);
    chart('chart-pending', [{ color: '#1d4ed8', values: pad(function (h) { return h.pipeline.pending; }) }]);
    chart('chart-lag', [{ color: '#7c3aed', values: pad(function (h) { return h.lso.maxLagRecords; }) }]);
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
    text(el('updated'), 'last update ' + new Date(s.at).toLocaleTimeString());
  }
  function tick() {
    fetch('status.json', { cache: 'no-store' }).then(function (r) { return r.json(); }).then(render, function () {
      var state = el('state'); text(state, 'eoswatch not reachable'); state.className = 'badge alerting';
    });
  }
  tick();
  setInterval(tick, 2000);
})();
`;

export function statusPageRouter(deps: StatusPageDeps): Router {
  const readings: Reading[] = [];
  const r = Router();
  r.get('/', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(HTML);
  });
  r.get('/status/page.js', (_req, res) => void res.type('application/javascript').send(JS));
  r.get('/status/page.css', (_req, res) => void res.type('text/css').send(CSS));
  r.get('/status.json', async (_req, res) => {
    try {
      const current: Reading = { atMs: Date.now(), metrics: parsePrometheusText(await rendererFor(deps.registry).render()) };
      const previous = [...readings].reverse().find((x) => current.atMs - x.atMs >= MIN_WINDOW_MS);
      if (!readings.length || current.atMs - readings[readings.length - 1]!.atMs >= MIN_WINDOW_MS / 2) readings.push(current);
      if (readings.length > 10) readings.shift();
      const ready = deps.readiness();
      const report = deps.audit?.();
      const summary = summarize({
        url: '',
        current,
        previous,
        ready: { ok: ready.ready, services: ready.services },
        audit: report ? { summary: report.summary, findings: sortFindings(report.findings).filter((f) => !f.passed) } : undefined,
      });
      res.set('Cache-Control', 'no-store').json(summary);
    } catch (err) {
      res.status(500).json({ error: (err as Error).message });
    }
  });
  return r;
}
