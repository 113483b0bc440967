// The deployment examples under deploy/ as the tools render and check them: each Kubernetes
// sidecar example (next to a Kafka Streams workload, next to a Flink JobManager) renders with
// `kubectl kustomize` to exactly its manifests, with the eoswatch image set and no secret in plain
// text; promtool accepts the compose example's Prometheus configuration. kubectl (Debian package
// `kubernetes-client`) and promtool (`prometheus`) are required: without them these tests FAIL
// with an install hint, they never skip. The rest of the examples' consistency is checked without
// a process by test/unit/deploy/examples.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import {
  COMPOSE_DIR,
  K8S,
  K8S_FLINK,
  SECRET_EXAMPLE,
  compose,
  hostPathOf,
  objectsIn,
  rel,
  serviceByImage,
  sidecarExample,
  type ConfigMap,
  type Deployment,
  type K8sObject,
  type Secret,
} from '../harness/deploy.js';

/** `kubectl kustomize <dir>`: the text it prints and its objects (once per directory). */
const rendered = new Map<string, { text: string; objects: K8sObject[] }>();
function kustomize(dir: string): { text: string; objects: K8sObject[] } {
  const done = rendered.get(dir);
  if (done) return done;
  const r = spawnSync(process.env.KUBECTL ?? 'kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  assert.ok(
    !(r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT'),
    'kubectl not found: install the Debian package "kubernetes-client" (.ci/run does) or set KUBECTL. This test never skips.',
  );
  assert.equal(r.status, 0, r.stderr);
  const out = { text: r.stdout, objects: Array.from(parseAllDocuments(r.stdout)).map((d) => d.toJS() as K8sObject) };
  rendered.set(dir, out);
  return out;
}

/** The kubectl tests of a sidecar example; `kinds`: the kinds kustomize renders, sorted. */
function renderTests(dir: string, kinds: string[]): void {
  const ex = sidecarExample(dir);
  const { objs } = ex;
  const where = rel(dir);
  const applied = objs.filter((o) => o.file !== SECRET_EXAMPLE);

  test(`kubectl kustomize ${where} renders exactly its manifests, with the eoswatch image set`, () => {
    const { objects } = kustomize(dir);
    const id = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;
    assert.deepEqual(objects.map((o) => o.kind).sort(), kinds);
    assert.deepEqual(objects.map(id).sort(), applied.map((o) => id(o.obj)).sort());
    for (const d of objects.filter((o): o is Deployment => o.kind === 'Deployment')) {
      const source = ex.deployments.find((x) => x.metadata.name === d.metadata.name)!;
      for (const c of d.spec.template.spec.containers) {
        const before = source.spec.template.spec.containers.find((x) => x.name === c.name)!.image;
        if (c.name === 'eoswatch') assert.match(c.image, /^registry\.example\.com\/eoswatch:/);
        else assert.equal(c.image, before, `${d.metadata.name}/${c.name}: only the eoswatch image is rewritten`);
      }
    }
  });

  test('no secret in plain text: credentials come from Secrets, the example placeholders appear nowhere', () => {
    const { text, objects } = kustomize(dir);
    assert.ok(!objects.some((o) => o.kind === 'Secret'), 'no Secret is applied');
    // Environment variables that carry credentials take them from a Secret.
    for (const d of objects.filter((o): o is Deployment => o.kind === 'Deployment')) {
      for (const c of d.spec.template.spec.containers) {
        for (const e of (c.env ?? []).filter((x) => /PASS|SECRET|TOKEN|CREDENTIAL/i.test(x.name))) {
          assert.equal(e.value, undefined, `${d.metadata.name}/${c.name}: env ${e.name} holds a literal value`);
          assert.ok(e.valueFrom?.secretKeyRef, `${d.metadata.name}/${c.name}: env ${e.name} does not come from a Secret`);
        }
      }
    }
    // The placeholders of secret.example.yaml stand for real passwords: nothing applied holds them.
    for (const { obj } of objectsIn(SECRET_EXAMPLE)) {
      const s = obj as Secret;
      const values = { ...Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])), ...s.stringData };
      for (const [k, v] of Object.entries(values)) if (/password|token/i.test(k)) assert.ok(!text.includes(v), `${s.metadata.name}/${k}'s value is in the rendered manifests`);
    }
    // In the ConfigMaps, a password, secret or token is a ${VARIABLE} from the environment.
    let seen = 0;
    for (const cm of objects.filter((o): o is ConfigMap => o.kind === 'ConfigMap')) {
      for (const [key, content] of Object.entries(cm.data ?? {})) {
        for (const line of content.split('\n').filter((l) => !l.trim().startsWith('#'))) {
          for (const m of line.matchAll(/(?:password|passwd|secret|token)[\w.-]*"?\s*[:=]\s*"?([^\s";]*)/gi)) {
            seen++;
            assert.match(m[1]!, /^\$\{[^}]+\}$/, `${cm.metadata.name}/${key}: "${line.trim()}" holds a literal credential`);
          }
        }
        // Basic auth users are bcrypt hashes, never passwords.
        const web = /\bbasic_auth_users:/.test(content) ? (parse(content) as { basic_auth_users?: Record<string, string> }) : {};
        for (const [user, hash] of Object.entries(web.basic_auth_users ?? {})) assert.match(hash, /^\$2[aby]\$\d\d\$/, `${cm.metadata.name}/${key}: user ${user} has no bcrypt hash`);
      }
    }
    assert.ok(seen > 0, 'the eoswatch config names its SASL password (as a ${VARIABLE})');
  });
}

describe('deploy/kubernetes: sidecar example', () => {
  renderTests(K8S, ['ConfigMap', 'ConfigMap', 'Deployment', 'PrometheusRule', 'Service', 'ServiceMonitor']);
});

describe('deploy/kubernetes/flink: eoswatch next to a Flink JobManager', () => {
  renderTests(K8S_FLINK, ['ConfigMap', 'ConfigMap', 'Deployment', 'Deployment', 'PersistentVolumeClaim', 'PrometheusRule', 'Service', 'Service', 'ServiceMonitor']);
});

describe('deploy/compose: compose.yaml', () => {
  test('promtool check config passes (rule file paths mapped to the host)', () => {
    const c = compose();
    const [, prom] = serviceByImage(c, 'prom/prometheus');
    const pc = parse(readFileSync(join(COMPOSE_DIR, 'prometheus.yml'), 'utf8')) as { rule_files?: string[] };
    const dir = mkdtempSync(join(tmpdir(), 'eoswatch-promtool-'));
    try {
      pc.rule_files = (pc.rule_files ?? []).map((r) => hostPathOf(prom, r) ?? r);
      const file = join(dir, 'prometheus.yml');
      writeFileSync(file, JSON.stringify(pc));
      const r = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'config', file], { encoding: 'utf8', timeout: 60_000 });
      assert.ok(
        !(r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT'),
        'promtool not found: install the Debian package "prometheus" (.ci/run does) or set PROMTOOL. This test never skips.',
      );
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(`${r.stdout}${r.stderr}`, /SUCCESS: 1 rule files found|SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
