// The deployment examples under deploy/ stay consistent with the rest of the repository: every
// YAML parses; the Kubernetes sidecar example's ConfigMap holds a config the project's own
// validation accepts, its Service/ServiceMonitor/Deployment selectors, ports and probes line up and
// its PrometheusRule is alerts/eoswatch.rules.yml; the compose file mounts files that exist, its
// eoswatch config validates, Prometheus loads the rules file it mounts and scrapes eoswatch, and
// Grafana provisions the dashboard with a datasource its `datasource` variable can pick.
// No Docker and no Kubernetes cluster needed; promtool and kubectl are used when present.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { EosError } from '../../src/errors.js';
import { runAudit } from '../../src/audit/runner.js';
import { propertiesSource } from '../../src/audit/sources/files.js';
import { ALL_CHECKS } from '../../src/audit/checks/index.js';
import { loadWebConfig } from '../../src/http/web-config.js';
import bcrypt from 'bcryptjs';
import { makeTestPki } from '../harness/tls.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const K8S = join(DEPLOY, 'kubernetes');
const COMPOSE_FILE = join(DEPLOY, 'compose', 'compose.yaml');
const COMPOSE_DIR = dirname(COMPOSE_FILE);
const RULES = 'alerts/eoswatch.rules.yml';
const DASHBOARD = 'dashboards/eoswatch-overview.json';

// ---------------------------------------------------------------------------------------------
// Helpers

type Labels = Record<string, string>;
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  [k: string]: unknown;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path?: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}
interface KeyItems {
  items?: { key: string; path: string }[];
}
interface Volume {
  name: string;
  configMap?: { name: string } & KeyItems;
  secret?: { secretName: string } & KeyItems;
  emptyDir?: unknown;
}
interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
}
interface Deployment extends K8sObject {
  spec: { selector: { matchLabels: Labels }; template: { metadata: { labels: Labels }; spec: PodSpec } };
}
interface Service extends K8sObject {
  spec: { selector: Labels; ports: { name?: string; port: number; targetPort?: string | number }[] };
}
interface ServiceMonitor extends K8sObject {
  spec: {
    jobLabel?: string;
    selector: { matchLabels?: Labels; matchExpressions?: unknown[] };
    endpoints: { port?: string; targetPort?: unknown; path?: string; scheme?: string }[];
  };
}
interface ConfigMap extends K8sObject {
  data?: Record<string, string>;
}
interface Secret extends K8sObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: { alert?: string; expr: string }[];
}

const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');
const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/');

/** Every .yaml/.yml file under a directory. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []))
    .sort();
}

/** All documents of a (multi-document) YAML file; syntax errors fail with file and position. */
function yamlDocs(file: string): unknown[] {
  const docs = Array.from(parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true, uniqueKeys: true }));
  for (const d of docs) assert.deepEqual(d.errors.map((e) => e.message), [], `${rel(file)}: YAML errors`);
  return docs.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The Kubernetes objects of deploy/kubernetes, by file. */
function k8sObjects(): { file: string; obj: K8sObject }[] {
  return yamlFiles(K8S).flatMap((file) =>
    yamlDocs(file)
      .filter((d): d is K8sObject => isObject(d) && typeof d.kind === 'string' && typeof d.apiVersion === 'string' && d.kind !== 'Kustomization')
      .map((obj) => ({ file, obj })),
  );
}

function only<T extends K8sObject>(objs: { file: string; obj: K8sObject }[], kind: string, file?: string): T {
  const found = objs.filter((o) => o.obj.kind === kind && (file === undefined || o.file === file));
  assert.equal(found.length, 1, `expected exactly one ${kind}${file ? ` in ${rel(file)}` : ''}, found ${found.length}`);
  return found[0]!.obj as T;
}

function assertSubset(sub: Labels | undefined, sup: Labels | undefined, what: string): void {
  assert.ok(sub && Object.keys(sub).length > 0, `${what}: empty selector`);
  for (const [k, v] of Object.entries(sub)) assert.equal(sup?.[k], v, `${what}: label ${k}=${v} not matched (found ${JSON.stringify(sup ?? {})})`);
}

/** loadConfig, with every problem in the assertion message. */
async function validConfig(file: string, env: NodeJS.ProcessEnv, what: string): Promise<Config> {
  try {
    return await loadConfig(file, env);
  } catch (err) {
    if (err instanceof EosError) assert.fail(`${what} is not a valid eoswatch config: ${err.message}\n  ${err.details.join('\n  ')}`);
    throw err;
  }
}

function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'eoswatch-deploy-test-'));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** The Dockerfile's final stage: ENV defaults, USER, the port its HEALTHCHECK probes. */
function dockerfileFacts(): { env: Record<string, string>; user: string | undefined; healthcheckPort: number | undefined; exposed: number[] } {
  const text = read('Dockerfile').replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM\s/m);
  const last = stages[stages.length - 1] ?? '';
  const env: Record<string, string> = {};
  for (const m of last.matchAll(/^ENV\s+(.+)$/gm)) {
    for (const kv of (m[1] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env[kv[1]!] = kv[2]!.replace(/^"|"$/g, '');
  }
  const users = [...last.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
  // The probe's port: a literal, or EOSWATCH_PORT with its fallback (compose and Kubernetes leave it unset).
  const hc = /^HEALTHCHECK\b.*?(?:127\.0\.0\.1|localhost):(\d+)/m.exec(last) ?? /^HEALTHCHECK\b.*?EOSWATCH_PORT\s*\|\|\s*(\d+)/m.exec(last);
  const exposed = [...last.matchAll(/^EXPOSE\s+(.+)$/gm)].flatMap((m) => (m[1] ?? '').split(/\s+/).map((p) => Number.parseInt(p, 10)));
  return { env, user: users[users.length - 1], healthcheckPort: hc ? Number(hc[1]) : undefined, exposed };
}

/** The job regex EosExporterDown looks for (PromQL regexes are fully anchored). */
function exporterJobRegex(): RegExp {
  const groups = (parse(read(RULES)) as { groups: RuleGroup[] }).groups;
  const rule = groups.flatMap((g) => g.rules).find((r) => r.alert === 'EosExporterDown');
  assert.ok(rule, 'EosExporterDown not found in the rules');
  const m = /up\{[^}]*job=~"([^"]+)"/.exec(rule.expr);
  assert.ok(m, `EosExporterDown does not select up{job=~"..."}: ${rule.expr}`);
  return new RegExp(`^(?:${m[1]})$`);
}

const isPortOf = (c: Container, port: string | number): number | undefined =>
  typeof port === 'number' ? c.ports?.find((p) => p.containerPort === port)?.containerPort : c.ports?.find((p) => p.name === port)?.containerPort;

// ---------------------------------------------------------------------------------------------

describe('deploy: every YAML file parses', () => {
  const files = yamlFiles(DEPLOY);

  test('there are Kubernetes and compose files', () => {
    const names = files.map(rel);
    for (const f of ['deploy/kubernetes/kustomization.yaml', 'deploy/compose/compose.yaml', 'deploy/compose/prometheus.yml']) {
      assert.ok(names.includes(f), `${f} missing (found ${names.join(', ')})`);
    }
  });

  for (const file of files) {
    test(rel(file), () => {
      const docs = yamlDocs(file);
      assert.ok(docs.length > 0, `${rel(file)} has no document`);
      for (const d of docs) assert.ok(isObject(d), `${rel(file)}: every document must be a mapping`);
    });
  }
});

describe('deploy/kubernetes: sidecar example', () => {
  const objs = k8sObjects();
  const dep = only<Deployment>(objs, 'Deployment');
  const svc = only<Service>(objs, 'Service');
  const sm = only<ServiceMonitor>(objs, 'ServiceMonitor');
  const pod = dep.spec.template.spec;
  const eoswatch = pod.containers.find((c) => c.name === 'eoswatch');
  const docker = dockerfileFacts();

  /** What a path inside the eoswatch container is backed by: a ConfigMap or Secret key. */
  function backing(path: string): { volume: Volume; key: string; content?: string } {
    assert.ok(eoswatch);
    const mounts = (eoswatch.volumeMounts ?? [])
      .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
      .sort((a, b) => b.mountPath.length - a.mountPath.length);
    const mount = mounts[0];
    assert.ok(mount, `${path}: no volumeMount of the eoswatch container holds it`);
    assert.equal(mount.subPath, undefined, `${path}: subPath mounts never see ConfigMap updates; mount the directory`);
    const volume = pod.volumes?.find((v) => v.name === mount.name);
    assert.ok(volume, `${path}: volume ${mount.name} is not defined in the pod`);
    const inVolume = posix.relative(mount.mountPath, path);
    const source = volume.configMap ?? volume.secret;
    assert.ok(source, `${path}: volume ${volume.name} is neither a ConfigMap nor a Secret`);
    let key = inVolume;
    if (source.items) {
      const item = source.items.find((i) => i.path === inVolume);
      assert.ok(item, `${path}: volume ${volume.name} projects no item with path ${inVolume}`);
      key = item.key;
    }
    if (volume.configMap) {
      const cm = objs.find((o) => o.obj.kind === 'ConfigMap' && o.obj.metadata.name === volume.configMap!.name)?.obj as ConfigMap | undefined;
      assert.ok(cm, `${path}: ConfigMap ${volume.configMap.name} is not in deploy/kubernetes`);
      const content = cm.data?.[key];
      assert.ok(content !== undefined, `${path}: ConfigMap ${cm.metadata.name} has no key ${key}`);
      return { volume, key, content };
    }
    return { volume, key };
  }

  /** The container's environment as eoswatch sees it; a Secret reference becomes "secret:<name>/<key>". */
  function containerEnv(c: Container): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...docker.env };
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.secretKeyRef) env[e.name] = `secret:${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`;
      else if (e.valueFrom?.configMapKeyRef) env[e.name] = `configmap:${e.valueFrom.configMapKeyRef.name}/${e.valueFrom.configMapKeyRef.key}`;
    }
    return env;
  }

  function configPath(c: Container): string {
    const args = [...(c.command ?? []), ...(c.args ?? [])];
    const i = args.findIndex((a) => a === '--config' || a === '-c');
    if (i >= 0) return args[i + 1] ?? '';
    const p = containerEnv(c).EOSWATCH_CONFIG;
    assert.ok(p, 'the eoswatch container has no config path (EOSWATCH_CONFIG or --config)');
    return p;
  }

  async function sidecarConfig(): Promise<Config> {
    assert.ok(eoswatch);
    const path = configPath(eoswatch);
    const { content } = backing(path);
    return withTempDir(async (dir) => {
      const file = join(dir, 'eoswatch.yaml');
      writeFileSync(file, content ?? '');
      return validConfig(file, containerEnv(eoswatch), `the ConfigMap's ${path}`);
    });
  }

  test('kustomization.yaml lists every manifest except the example Secret, and sets the eoswatch image', () => {
    const k = parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
      images?: { name: string; newName?: string; newTag?: string }[];
    };
    for (const r of k.resources) assert.ok(existsSync(join(K8S, r)), `kustomization resource ${r} does not exist`);
    const manifests = [...new Set(objs.map((o) => posix.relative('deploy/kubernetes', rel(o.file))))].filter((f) => f !== 'secret.example.yaml');
    assert.deepEqual([...k.resources].sort(), manifests.sort());
    const kinds = objs.filter((o) => k.resources.includes(posix.relative('deploy/kubernetes', rel(o.file)))).map((o) => o.obj.kind);
    for (const kind of ['Deployment', 'ConfigMap', 'Service', 'ServiceMonitor', 'PrometheusRule']) assert.ok(kinds.includes(kind), `no ${kind} in the kustomization`);
    assert.ok(!kinds.includes('Secret'), 'a Secret with a placeholder password must not be applied');
    assert.ok(eoswatch, 'no container named eoswatch');
    const [imageName, imageTag] = eoswatch.image.split(':');
    const image = k.images?.find((i) => i.name === imageName);
    assert.ok(image, `kustomization images has no entry for ${imageName}`);
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    assert.equal(imageTag, version, 'the eoswatch image tag is the package version');
    assert.equal(image.newTag, version, 'kustomization newTag is the package version');
  });

  test('kubectl kustomize renders it', (t) => {
    const r = spawnSync('kubectl', ['kustomize', K8S], { encoding: 'utf8', timeout: 60_000 });
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
      t.skip('kubectl not on PATH');
      return;
    }
    assert.equal(r.status, 0, r.stderr);
    const rendered = Array.from(parseAllDocuments(r.stdout)).map((d) => d.toJS() as K8sObject);
    assert.deepEqual(rendered.map((o) => o.kind).sort(), ['ConfigMap', 'ConfigMap', 'Deployment', 'PrometheusRule', 'Service', 'ServiceMonitor']);
    const d = rendered.find((o) => o.kind === 'Deployment') as Deployment;
    assert.match(d.spec.template.spec.containers.find((c) => c.name === 'eoswatch')?.image ?? '', /^registry\.example\.com\/eoswatch:/);
  });

  test('the PrometheusRule spec.groups are exactly the groups of alerts/eoswatch.rules.yml', () => {
    const rule = only<K8sObject & { spec: { groups: RuleGroup[] } }>(objs, 'PrometheusRule');
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    const groups = (parse(read(RULES)) as { groups: RuleGroup[] }).groups;
    assert.ok(groups.length > 0 && groups.every((g) => g.rules.length > 0));
    assert.deepEqual(rule.spec.groups, groups, `deploy/kubernetes/prometheusrule.yaml is out of date: copy the groups of ${RULES} into its spec.groups`);
  });

  test('the ConfigMap holds a valid eoswatch config that fits the pod', async () => {
    assert.ok(eoswatch);
    const config = await sidecarConfig();
    const metrics = eoswatch.ports?.find((p) => p.name === 'metrics');
    assert.ok(metrics, 'the eoswatch container has no port named metrics');
    assert.equal(metrics.containerPort, 7395);
    assert.equal(config.http.port, metrics.containerPort, 'http.port is the container port');
    assert.ok(!['127.0.0.1', 'localhost', '::1'].includes(config.http.host), `http.host ${config.http.host}: probes and Prometheus come from outside the container`);
    const grace = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
    assert.ok(config.shutdown.gracePeriod < grace, `shutdown.gracePeriod ${config.shutdown.gracePeriod} ms must be below terminationGracePeriodSeconds (${grace} ms)`);
  });

  test('the SASL password comes from a Secret through KAFKA_SASL_PASSWORD', async () => {
    assert.ok(eoswatch);
    const cm = backing(configPath(eoswatch)).content ?? '';
    assert.match(cm, /password:\s*\$\{KAFKA_SASL_PASSWORD\}/, 'the config references ${KAFKA_SASL_PASSWORD}');
    const env = eoswatch.env?.find((e) => e.name === 'KAFKA_SASL_PASSWORD');
    const ref = env?.valueFrom?.secretKeyRef;
    assert.ok(ref, 'KAFKA_SASL_PASSWORD must come from a secretKeyRef');
    const config = await sidecarConfig();
    assert.equal(config.kafka.sasl?.password, `secret:${ref.name}/${ref.key}`);
    const example = exampleSecret(ref.name);
    assert.ok({ ...example.data, ...example.stringData }[ref.key] !== undefined, `secret.example.yaml has no key ${ref.key}`);
  });

  test('every file the config names is mounted into the sidecar; the workload files it audits pass the audit', async () => {
    assert.ok(eoswatch);
    const config = await sidecarConfig();
    const files: string[] = [config.kafka.ssl.caFile, config.kafka.ssl.certFile, config.kafka.ssl.keyFile, config.pipeline.transformModule].filter(
      (f): f is string => typeof f === 'string',
    );
    const audited: { role: 'producer' | 'consumer' | 'streams'; path: string }[] = [
      ...config.audit.producerConfigs.map((path) => ({ role: 'producer' as const, path })),
      ...config.audit.consumerConfigs.map((path) => ({ role: 'consumer' as const, path })),
      ...config.audit.streamsConfigs.map((path) => ({ role: 'streams' as const, path })),
    ];
    assert.ok(audited.length > 0, 'the sidecar example audits the workload configuration');
    for (const f of [...files, ...audited.map((a) => a.path), ...config.audit.flinkConfigs]) backing(f);
    // The workload mounts the same files it is audited on.
    const workload = pod.containers.find((c) => c !== eoswatch);
    assert.ok(workload, 'no workload container next to eoswatch');
    for (const a of audited) {
      const { volume } = backing(a.path);
      assert.ok(workload.volumeMounts?.some((m) => m.name === volume.name), `the workload does not mount volume ${volume.name} that eoswatch audits`);
    }
    await withTempDir(async (dir) => {
      const sources = audited.map((a, i) => {
        const file = join(dir, `${i}-${posix.basename(a.path)}`);
        writeFileSync(file, backing(a.path).content ?? '');
        return propertiesSource(a.role, file);
      });
      const report = await runAudit(sources, ALL_CHECKS);
      const failed = report.findings.filter((f) => !f.passed).map((f) => `${f.check} ${f.target}: ${f.observed}`);
      assert.deepEqual(failed, [], 'the example workload configuration is exactly-once safe');
      assert.ok(report.findings.some((f) => f.check !== 'audit.source' && f.passed), 'at least one client check judged the files');
    });
  });

  /** A Secret of secret.example.yaml by name (never applied: it holds placeholders). */
  function exampleSecret(name: string): Secret {
    const found = objs.filter((o) => o.obj.kind === 'Secret' && o.file === join(K8S, 'secret.example.yaml') && o.obj.metadata.name === name);
    assert.equal(found.length, 1, `secret.example.yaml has no Secret ${name}`);
    return found[0]!.obj as Secret;
  }

  test('the endpoints are secured: HTTPS and basic auth from a valid web config, Prometheus has the credentials, probes use the open paths', async () => {
    assert.ok(eoswatch);
    const config = await sidecarConfig();
    assert.ok(config.http.webConfigFile, 'http.webConfigFile is set');
    const web = parse(backing(config.http.webConfigFile).content ?? '') as {
      tls_server_config: { cert_file: string; key_file: string };
      basic_auth_users: Record<string, string>;
      auth_excluded_paths?: string[];
    };
    // The certificate files are mounted from the Secret the ServiceMonitor takes its CA from.
    const cert = backing(web.tls_server_config.cert_file);
    const key = backing(web.tls_server_config.key_file);
    assert.equal(cert.volume.secret?.secretName, key.volume.secret?.secretName);
    const ep = sm.spec.endpoints[0] as ServiceMonitor['spec']['endpoints'][number] & {
      tlsConfig?: { ca?: { secret?: { name: string; key: string } }; serverName?: string };
      basicAuth?: { username: { name: string; key: string }; password: { name: string; key: string } };
    };
    assert.equal(ep.scheme, 'https');
    assert.equal(ep.tlsConfig?.ca?.secret?.name, cert.volume.secret?.secretName, 'the ServiceMonitor trusts the CA of the mounted certificate');
    assert.equal(ep.tlsConfig?.serverName, svc.metadata.name);
    // The example scrape password is the one whose bcrypt hash the web config holds.
    assert.ok(ep.basicAuth, 'basicAuth');
    const creds = exampleSecret(ep.basicAuth.username.name);
    const values = { ...creds.data, ...creds.stringData };
    const user = values[ep.basicAuth.username.key]!;
    const hash = web.basic_auth_users[user];
    assert.ok(hash, `basic_auth_users has no user ${user}`);
    assert.ok(bcrypt.compareSync(values[ep.basicAuth.password.key]!, hash), 'the Secret password matches the bcrypt hash');
    // The file passes the project's own loader, with test certificates in place of the Secret's.
    const pki = await makeTestPki();
    try {
      const file = join(pki.dir, 'web-config.yml');
      writeFileSync(
        file,
        (backing(config.http.webConfigFile).content ?? '').replace(web.tls_server_config.cert_file, pki.files.serverCert).replace(web.tls_server_config.key_file, pki.files.serverKey),
      );
      const loaded = await loadWebConfig(file);
      assert.ok(loaded.tls && loaded.users.size === 1);
      for (const probe of [eoswatch.readinessProbe, eoswatch.livenessProbe]) {
        const get = probe?.httpGet as { path: string; scheme?: string } | undefined;
        assert.equal(get?.scheme, 'HTTPS', `${get?.path}: the port serves HTTPS`);
        assert.ok(loaded.authExcludedPaths.includes(get.path), `${get.path} needs no credentials (the kubelet sends none)`);
      }
    } finally {
      rmSync(pki.dir, { recursive: true, force: true });
    }
  });

  test('ServiceMonitor → Service → Deployment pods → eoswatch container port', () => {
    assert.ok(eoswatch);
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(sm.spec.selector.matchExpressions, undefined, 'matchLabels only (checked here)');
    assertSubset(sm.spec.selector.matchLabels, svc.metadata.labels, 'ServiceMonitor selector vs Service labels');
    assertSubset(svc.spec.selector, dep.spec.template.metadata.labels, 'Service selector vs pod labels');
    assertSubset(dep.spec.selector.matchLabels, dep.spec.template.metadata.labels, 'Deployment selector vs pod labels');
    assert.ok(sm.spec.endpoints.length > 0);
    for (const ep of sm.spec.endpoints) {
      assert.ok(ep.port, 'ServiceMonitor endpoints name the Service port');
      assert.equal(ep.path ?? '/metrics', '/metrics');
      const port = svc.spec.ports.find((p) => p.name === ep.port);
      assert.ok(port, `ServiceMonitor endpoint port ${ep.port} is not a port name of Service ${svc.metadata.name}`);
      const target = port.targetPort ?? port.port;
      assert.equal(isPortOf(eoswatch, target), 7395, `Service port ${port.name} targets ${target}, not the eoswatch container's metrics port`);
    }
    // Prometheus Operator's job label: the Service name unless jobLabel names a Service label.
    const job = sm.spec.jobLabel ? svc.metadata.labels?.[sm.spec.jobLabel] : svc.metadata.name;
    assert.match(job ?? '', exporterJobRegex(), `job "${job}" is invisible to EosExporterDown`);
  });

  test('probes: readiness /readyz and liveness /healthz on the metrics port', () => {
    assert.ok(eoswatch);
    const ready = eoswatch.readinessProbe?.httpGet;
    const live = eoswatch.livenessProbe?.httpGet;
    assert.ok(ready && live, 'httpGet readiness and liveness probes');
    assert.equal(ready?.path, '/readyz');
    assert.equal(live?.path, '/healthz');
    assert.equal(isPortOf(eoswatch, ready.port), 7395, `readiness port ${ready.port}`);
    assert.equal(isPortOf(eoswatch, live.port), 7395, `liveness port ${live.port}`);
  });

  test('the sidecar uses the Dockerfile image contract: config path, non-root, read-only root, resources', () => {
    assert.ok(eoswatch);
    assert.equal(eoswatch.command, undefined, 'keep the image ENTRYPOINT (node bin/eoswatch.js)');
    assert.deepEqual(eoswatch.args ?? ['run'], ['run']);
    assert.equal(docker.env.EOSWATCH_CONFIG, '/etc/eoswatch/eoswatch.yaml');
    assert.equal(configPath(eoswatch), docker.env.EOSWATCH_CONFIG, 'the config lives where the image expects it');
    assert.ok(docker.exposed.includes(7395), 'the Dockerfile EXPOSEs 7395');
    const sc = { ...pod.securityContext, ...eoswatch.securityContext };
    assert.equal(sc.runAsNonRoot, true);
    assert.equal(sc.readOnlyRootFilesystem, true);
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.ok(sc.capabilities?.drop?.includes('ALL'));
    // runAsNonRoot cannot verify a named USER ("node"): the kubelet refuses to start the container.
    if (docker.user && !/^\d+(:\d+)?$/.test(docker.user)) {
      assert.ok(typeof sc.runAsUser === 'number' && sc.runAsUser > 0, `the image's USER ${docker.user} is not numeric: set runAsUser`);
    }
    for (const k of ['cpu', 'memory']) assert.ok(eoswatch.resources?.requests?.[k], `resources.requests.${k}`);
    assert.ok(eoswatch.resources?.limits?.memory, 'resources.limits.memory');
  });
});

// ---------------------------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  entrypoint?: string | string[];
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: (string | { type?: string; source?: string; target: string })[];
  ports?: (string | number | { target: number; published?: string | number })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  stop_grace_period?: string;
}
interface Compose {
  services: Record<string, ComposeService>;
}

const compose = (): Compose => parse(readFileSync(COMPOSE_FILE, 'utf8')) as Compose;

function composeEnv(s: ComposeService): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  if (Array.isArray(s.environment)) {
    for (const kv of s.environment) {
      const i = kv.indexOf('=');
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
  } else {
    for (const [k, v] of Object.entries(s.environment ?? {})) if (v !== null) env[k] = String(v);
  }
  return env;
}

/** Bind mounts of a service: host path (absolute) → container path. Named volumes are skipped. */
function bindMounts(s: ComposeService): { host: string; target: string; spec: string }[] {
  return (s.volumes ?? []).flatMap((v) => {
    let source: string | undefined;
    let target: string;
    if (typeof v === 'string') {
      const parts = v.split(':');
      if (parts.length < 2) return [];
      source = parts[0];
      target = parts[1]!;
    } else {
      if (v.type !== undefined && v.type !== 'bind') return [];
      source = v.source;
      target = v.target;
    }
    if (!source || !/^[./~]/.test(source)) return []; // a named volume
    return [{ host: resolve(COMPOSE_DIR, source), target, spec: typeof v === 'string' ? v : JSON.stringify(v) }];
  });
}

/** The host file behind a path in a service's container, through its bind mounts. */
function hostPathOf(s: ComposeService, containerPath: string): string | undefined {
  const m = bindMounts(s)
    .filter((b) => containerPath === b.target || containerPath.startsWith(`${b.target.replace(/\/$/, '')}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  return m ? join(m.host, posix.relative(m.target, containerPath)) : undefined;
}

const durationSeconds = (d: string | undefined, dflt: number): number => {
  if (!d) return dflt;
  let total = 0;
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * units[m[2]!]!;
  return total;
};

const text = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(' ') : v ?? '');

function serviceByImage(c: Compose, prefix: string): [string, ComposeService] {
  const found = Object.entries(c.services).filter(([, s]) => s.image?.startsWith(prefix));
  assert.equal(found.length, 1, `expected one service with image ${prefix}*, found ${found.map(([n]) => n).join(', ') || 'none'}`);
  return found[0]!;
}

describe('deploy/compose: compose.yaml', () => {
  test('every service has an image or a build; builds use the repository Dockerfile', () => {
    const c = compose();
    const names = Object.keys(c.services ?? {});
    for (const n of ['kafka', 'eoswatch', 'prometheus', 'grafana']) assert.ok(names.includes(n), `no service ${n}`);
    for (const [name, s] of Object.entries(c.services)) {
      assert.ok(s.image || s.build, `service ${name} has neither image nor build`);
      if (s.build) {
        const b = typeof s.build === 'string' ? { context: s.build } : s.build;
        const ctx = resolve(COMPOSE_DIR, b.context ?? '.');
        assert.ok(existsSync(join(ctx, b.dockerfile ?? 'Dockerfile')), `service ${name}: no ${b.dockerfile ?? 'Dockerfile'} in build context ${ctx}`);
        assert.equal(rel(ctx), '', `service ${name}: build context is the repository root`);
      }
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) assert.ok(names.includes(d), `service ${name} depends on unknown service ${d}`);
    }
  });

  test('every host file or directory it mounts exists in the repository', () => {
    const c = compose();
    let count = 0;
    for (const [name, s] of Object.entries(c.services)) {
      for (const b of bindMounts(s)) {
        count++;
        assert.ok(!rel(b.host).startsWith('..'), `service ${name}: ${b.spec} mounts ${b.host}, outside the repository`);
        assert.ok(existsSync(b.host), `service ${name}: ${b.spec}: ${rel(b.host)} does not exist (Docker would create an empty directory)`);
      }
    }
    assert.ok(count >= 4, `expected the config, prometheus.yml, rules, provisioning and dashboard mounts, found ${count}`);
  });

  test('the eoswatch config it mounts is valid and fits the services', async () => {
    const c = compose();
    const s = c.services.eoswatch;
    assert.ok(s);
    const docker = dockerfileFacts();
    const env = { ...docker.env, ...composeEnv(s) };
    const path = env.EOSWATCH_CONFIG;
    assert.ok(path, 'no EOSWATCH_CONFIG');
    assert.equal(s.entrypoint, undefined, 'keep the image ENTRYPOINT');
    const host = hostPathOf(s, path);
    assert.ok(host && existsSync(host) && statSync(host).isFile(), `${path} is not mounted from a host file`);
    const config = await validConfig(host, env, rel(host));
    // The image's HEALTHCHECK probes a fixed port; Prometheus scrapes the published one.
    assert.equal(config.http.port, docker.healthcheckPort, 'http.port is the port the Dockerfile HEALTHCHECK probes');
    assert.ok(!['127.0.0.1', 'localhost'].includes(config.http.host), 'http.host must accept connections from other containers');
    assert.ok(
      (s.ports ?? []).some((p) => String(typeof p === 'object' ? p.target : p).endsWith(String(config.http.port))),
      `port ${config.http.port} is not published`,
    );
    assert.ok(config.shutdown.gracePeriod < durationSeconds(s.stop_grace_period, 10) * 1000, 'shutdown.gracePeriod below stop_grace_period');
    // Brokers are the kafka service's advertised in-network listener.
    const kafka = c.services.kafka;
    assert.ok(kafka);
    const advertised = composeEnv(kafka).KAFKA_ADVERTISED_LISTENERS ?? '';
    for (const b of config.kafka.brokers) assert.ok(advertised.includes(`://${b}`), `broker ${b} is not advertised by the kafka service (${advertised})`);
    // The daemon never creates topics: the one-shot `eoswatch topics create` service must, from the same config.
    if (config.pipeline.enabled) {
      const init = Object.entries(c.services).find(([, x]) => /\btopics\s+create\b/.test(text(x.command)));
      assert.ok(init, 'no service creates the topics');
      const args = text(init[1].command).split(/\s+/);
      const configArg = args[args.indexOf('--config') + 1];
      assert.ok(configArg && args.includes('--config'), `${init[0]} passes no --config`);
      assert.equal(hostPathOf(init[1], configArg), host, `${init[0]} creates the topics of another config than eoswatch's`);
      const deps = s.depends_on && !Array.isArray(s.depends_on) ? s.depends_on : {};
      assert.equal(deps[init[0]]?.condition, 'service_completed_successfully', `eoswatch waits for ${init[0]} to finish`);
    }
  });

  test('Prometheus loads the rules file it mounts and scrapes eoswatch', () => {
    const c = compose();
    const [, prom] = serviceByImage(c, 'prom/prometheus');
    const cmd = text(prom.command);
    const configPath = /--config\.file=(\S+)/.exec(cmd)?.[1] ?? '/etc/prometheus/prometheus.yml';
    const host = hostPathOf(prom, configPath);
    assert.ok(host && existsSync(host), `${configPath} is not mounted`);
    assert.equal(rel(host), 'deploy/compose/prometheus.yml');
    const pc = parse(readFileSync(host, 'utf8')) as {
      rule_files?: string[];
      scrape_configs: { job_name: string; metrics_path?: string; static_configs?: { targets: string[] }[] }[];
    };
    const rules = (pc.rule_files ?? []).map((r) => {
      const h = hostPathOf(prom, posix.isAbsolute(r) ? r : posix.join(posix.dirname(configPath), r));
      assert.ok(h && existsSync(h), `rule file ${r} is not mounted into the Prometheus container`);
      return rel(h);
    });
    assert.deepEqual(rules, [RULES]);
    const eos = c.services.eoswatch;
    assert.ok(eos);
    const port = dockerfileFacts().healthcheckPort;
    const jobs = pc.scrape_configs.filter((j) => (j.static_configs ?? []).some((s) => s.targets.includes(`eoswatch:${port}`)));
    assert.equal(jobs.length, 1, `one scrape job targets eoswatch:${port}`);
    assert.match(jobs[0]!.job_name, exporterJobRegex(), 'job name visible to EosExporterDown');
    assert.equal(jobs[0]!.metrics_path ?? '/metrics', '/metrics');
  });

  test('eoswatch protects its endpoints with basic auth, and Prometheus scrapes with the matching password', async () => {
    const c = compose();
    const s = c.services.eoswatch;
    assert.ok(s);
    const env = { ...dockerfileFacts().env, ...composeEnv(s) };
    const config = await validConfig(hostPathOf(s, env.EOSWATCH_CONFIG!)!, env, 'the compose eoswatch config');
    assert.ok(config.http.webConfigFile, 'http.webConfigFile is set');
    const webFile = hostPathOf(s, config.http.webConfigFile);
    assert.ok(webFile && existsSync(webFile), `${config.http.webConfigFile} is not mounted from a host file`);
    const web = await loadWebConfig(webFile);
    assert.ok(web.authExcludedPaths.includes('/healthz'), 'the image HEALTHCHECK probes /healthz without credentials');
    const pc = parse(readFileSync(join(COMPOSE_DIR, 'prometheus.yml'), 'utf8')) as { scrape_configs: { job_name: string; basic_auth?: { username: string; password: string } }[] };
    const job = pc.scrape_configs.find((j) => j.job_name === 'eoswatch');
    assert.ok(job?.basic_auth, 'the eoswatch scrape job has basic_auth');
    const hash = web.users.get(job.basic_auth.username);
    assert.ok(hash && bcrypt.compareSync(job.basic_auth.password, hash), 'the scrape password matches the bcrypt hash in the web config');
  });

  test('promtool check config passes (rule file paths mapped to the host)', (t) => {
    const c = compose();
    const [, prom] = serviceByImage(c, 'prom/prometheus');
    const pc = parse(readFileSync(join(COMPOSE_DIR, 'prometheus.yml'), 'utf8')) as { rule_files?: string[] };
    const dir = mkdtempSync(join(tmpdir(), 'eoswatch-promtool-'));
    try {
      pc.rule_files = (pc.rule_files ?? []).map((r) => hostPathOf(prom, r) ?? r);
      const file = join(dir, 'prometheus.yml');
      writeFileSync(file, JSON.stringify(pc));
      const r = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'config', file], { encoding: 'utf8', timeout: 60_000 });
      if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
        t.skip('promtool not on PATH');
        return;
      }
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(`${r.stdout}${r.stderr}`, /SUCCESS: 1 rule files found|SUCCESS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Grafana provisions the Prometheus datasource and the mounted dashboard', () => {
    const c = compose();
    const [, grafana] = serviceByImage(c, 'grafana/grafana');
    const env = composeEnv(grafana);
    const provisioning = env.GF_PATHS_PROVISIONING ?? '/etc/grafana/provisioning';
    const provDir = hostPathOf(grafana, provisioning);
    assert.ok(provDir && existsSync(provDir), `${provisioning} is not mounted`);

    // Datasource: the Prometheus service, default, of the type the dashboard's variable lists.
    const dsFiles = existsSync(join(provDir, 'datasources')) ? yamlFiles(join(provDir, 'datasources')) : [];
    const datasources = dsFiles.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { datasources?: { type: string; url: string; isDefault?: boolean }[] }).datasources ?? []);
    const [promName, prom] = serviceByImage(c, 'prom/prometheus');
    const ds = datasources.find((d) => d.type === 'prometheus');
    assert.ok(ds, 'no provisioned prometheus datasource');
    const url = new URL(ds.url);
    assert.equal(url.hostname, promName, 'the datasource points at the Prometheus service');
    const listen = /--web\.listen-address=\S*:(\d+)/.exec(text(prom.command))?.[1] ?? '9090';
    assert.equal(url.port || '80', listen);
    assert.equal(ds.isDefault, true, 'the default datasource is what the dashboard variable selects first');

    const dash = JSON.parse(read(DASHBOARD)) as { uid: string; __inputs?: unknown; templating: { list: { name: string; type: string; query?: unknown }[] } };
    const dsVar = dash.templating.list.find((v) => v.type === 'datasource');
    assert.ok(dsVar, 'the dashboard selects its datasource through a variable');
    assert.equal(dsVar.query, ds.type);
    // File provisioning does not resolve import-time inputs.
    assert.equal(dash.__inputs, undefined, 'no __inputs: provisioning cannot fill them');
    assert.doesNotMatch(read(DASHBOARD), /\$\{DS_[A-Z0-9_]+\}/, 'no ${DS_...} placeholders: provisioning cannot fill them');

    // Dashboards: a file provider whose path holds the mounted repository dashboard.
    const dbFiles = existsSync(join(provDir, 'dashboards')) ? yamlFiles(join(provDir, 'dashboards')) : [];
    const providers = dbFiles.flatMap((f) => (parse(readFileSync(f, 'utf8')) as { providers?: { type?: string; options?: { path?: string } }[] }).providers ?? []);
    const paths = providers.filter((p) => (p.type ?? 'file') === 'file').map((p) => p.options?.path ?? '');
    assert.ok(paths.length > 0, 'no file dashboard provider');
    const provided = bindMounts(grafana).filter((b) => paths.some((p) => b.target === p || b.target.startsWith(`${p.replace(/\/$/, '')}/`)));
    const hostFiles = provided.flatMap((b) => (statSync(b.host).isDirectory() ? readdirSync(b.host).map((f) => join(b.host, f)) : [b.host])).map(rel);
    assert.ok(hostFiles.includes(DASHBOARD), `no dashboard provider path holds ${DASHBOARD} (mounted: ${hostFiles.join(', ') || 'nothing'})`);
    const home = env.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH;
    if (home) assert.equal(rel(hostPathOf(grafana, home) ?? ''), DASHBOARD, 'the home dashboard is the mounted dashboard');
  });
});
