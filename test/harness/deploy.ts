// The deployment examples under deploy/ as the tests read them: their paths, the shapes of the
// Kubernetes objects and compose services they hold, and helpers that read them (the objects of a
// Kubernetes example and of the kustomizations it includes, a sidecar example's pod, Service,
// ServiceMonitor and config, the compose file's services, mounts and environment). Used by
// test/unit/deploy/examples.test.ts and test/integration/deploy.test.ts (kubectl and promtool).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { EosError } from '../../src/errors.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DEPLOY = join(ROOT, 'deploy');
export const K8S = join(DEPLOY, 'kubernetes');
export const K8S_FLINK = join(K8S, 'flink');
// The shape of the Secrets both Kubernetes examples use (never applied: placeholders).
export const SECRET_EXAMPLE = join(K8S, 'secret.example.yaml');
// FLINK_HOME of the official Flink image: its configuration is $FLINK_HOME/conf/config.yaml.
export const FLINK_HOME = '/opt/flink';
export const COMPOSE_FILE = join(DEPLOY, 'compose', 'compose.yaml');
export const COMPOSE_DIR = dirname(COMPOSE_FILE);
export const RULES = 'alerts/eoswatch.rules.yml';
export const DASHBOARD = 'dashboards/eoswatch-overview.json';

// ---------------------------------------------------------------------------------------------
// Helpers

export type Labels = Record<string, string>;
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  [k: string]: unknown;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
export interface Probe {
  httpGet?: { path?: string; port: string | number; scheme?: string };
  tcpSocket?: { port: string | number };
}
export interface Container {
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
export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}
export interface KeyItems {
  items?: { key: string; path: string }[];
}
export interface Volume {
  name: string;
  configMap?: { name: string } & KeyItems;
  secret?: { secretName: string } & KeyItems;
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: unknown;
}
export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
}
export interface Deployment extends K8sObject {
  spec: { replicas?: number; selector: { matchLabels: Labels }; template: { metadata: { labels: Labels }; spec: PodSpec } };
}
export interface Service extends K8sObject {
  spec: { selector: Labels; publishNotReadyAddresses?: boolean; ports: { name?: string; port: number; targetPort?: string | number }[] };
}
export interface PersistentVolumeClaim extends K8sObject {
  spec: { accessModes: string[] };
}
export interface ServiceMonitor extends K8sObject {
  spec: {
    jobLabel?: string;
    selector: { matchLabels?: Labels; matchExpressions?: unknown[] };
    endpoints: { port?: string; targetPort?: unknown; path?: string; scheme?: string }[];
  };
}
export interface ConfigMap extends K8sObject {
  data?: Record<string, string>;
}
export interface Secret extends K8sObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: { alert?: string; expr: string }[];
}

export const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');
export const rel = (abs: string): string => relative(ROOT, abs).split(sep).join('/');

/** Every .yaml/.yml file under a directory. */
export function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []))
    .sort();
}

/** All documents of a (multi-document) YAML file; syntax errors fail with file and position. */
export function yamlDocs(file: string): unknown[] {
  const docs = Array.from(parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true, uniqueKeys: true }));
  for (const d of docs) assert.deepEqual(d.errors.map((e) => e.message), [], `${rel(file)}: YAML errors`);
  return docs.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export type Placed = { file: string; obj: K8sObject };

/** The Kubernetes objects of a YAML file (a Kustomization left out). */
export function objectsIn(file: string): Placed[] {
  return yamlDocs(file)
    .filter((d): d is K8sObject => isObject(d) && typeof d.kind === 'string' && typeof d.apiVersion === 'string' && d.kind !== 'Kustomization')
    .map((obj) => ({ file, obj }));
}

export interface Kustomization {
  resources: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
}
export const kustomization = (dir: string): Kustomization => parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;

/**
 * The objects of a Kubernetes example: the YAML files of its directory (a subdirectory is an
 * example or a shared part of its own) and those of the kustomizations it includes as resources.
 */
export function k8sObjects(dir: string): Placed[] {
  const own = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
  const included = kustomization(dir)
    .resources.map((r) => resolve(dir, r))
    .filter((p) => existsSync(p) && statSync(p).isDirectory());
  return [...own.flatMap(objectsIn), ...included.flatMap(k8sObjects)];
}

/** Flink's MemorySize syntax (1600m, 1g, 512 mb: binary units) → bytes. */
export function flinkBytes(text: string): number {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const units: Record<string, number> = { '': 1, b: 1, bytes: 1, k: 2 ** 10, kb: 2 ** 10, m: 2 ** 20, mb: 2 ** 20, g: 2 ** 30, gb: 2 ** 30, t: 2 ** 40, tb: 2 ** 40 };
  const unit = units[m?.[2]?.toLowerCase() ?? '?'];
  assert.ok(m && unit !== undefined, `"${text}" is not a Flink memory size`);
  return Number(m[1]) * unit;
}

/** A Kubernetes quantity of bytes (1600Mi, 2Gi, 1G, 500M) → bytes. */
export function k8sBytes(text: string): number {
  const m = /^(\d+)([KMGT]i?|k)?$/.exec(text.trim());
  assert.ok(m, `"${text}" is not a Kubernetes memory quantity`);
  const [, n, suffix = ''] = m;
  const exp = { '': 0, k: 1, K: 1, M: 2, G: 3, T: 4 }[suffix.replace('i', '')] ?? 0;
  return Number(n) * (suffix.endsWith('i') ? 1024 : 1000) ** exp;
}

export function only<T extends K8sObject>(objs: { file: string; obj: K8sObject }[], kind: string, file?: string): T {
  const found = objs.filter((o) => o.obj.kind === kind && (file === undefined || o.file === file));
  assert.equal(found.length, 1, `expected exactly one ${kind}${file ? ` in ${rel(file)}` : ''}, found ${found.length}`);
  return found[0]!.obj as T;
}

export function assertSubset(sub: Labels | undefined, sup: Labels | undefined, what: string): void {
  assert.ok(sub && Object.keys(sub).length > 0, `${what}: empty selector`);
  for (const [k, v] of Object.entries(sub)) assert.equal(sup?.[k], v, `${what}: label ${k}=${v} not matched (found ${JSON.stringify(sup ?? {})})`);
}

/** loadConfig, with every problem in the assertion message. */
export async function validConfig(file: string, env: NodeJS.ProcessEnv, what: string): Promise<Config> {
  try {
    return await loadConfig(file, env);
  } catch (err) {
    if (err instanceof EosError) assert.fail(`${what} is not a valid eoswatch config: ${err.message}\n  ${err.details.join('\n  ')}`);
    throw err;
  }
}

export function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'eoswatch-deploy-test-'));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/** The Dockerfile's final stage: ENV defaults, USER, the port its HEALTHCHECK probes. */
export function dockerfileFacts(): { env: Record<string, string>; user: string | undefined; healthcheckPort: number | undefined; exposed: number[] } {
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
export function exporterJobRegex(): RegExp {
  const groups = (parse(read(RULES)) as { groups: RuleGroup[] }).groups;
  const rule = groups.flatMap((g) => g.rules).find((r) => r.alert === 'EosExporterDown');
  assert.ok(rule, 'EosExporterDown not found in the rules');
  const m = /up\{[^}]*job=~"([^"]+)"/.exec(rule.expr);
  assert.ok(m, `EosExporterDown does not select up{job=~"..."}: ${rule.expr}`);
  return new RegExp(`^(?:${m[1]})$`);
}

export const isPortOf = (c: Container, port: string | number): number | undefined =>
  typeof port === 'number' ? c.ports?.find((p) => p.containerPort === port)?.containerPort : c.ports?.find((p) => p.name === port)?.containerPort;


/** A Kubernetes sidecar example: its objects, the pod with the eoswatch container, the Service and ServiceMonitor of its metrics. */
export function sidecarExample(dir: string) {
  const objs = k8sObjects(dir);
  const ofKind = <T extends K8sObject>(kind: string): T[] => objs.filter((o) => o.obj.kind === kind).map((o) => o.obj as T);
  const deployments = ofKind<Deployment>('Deployment');
  const withSidecar = deployments.filter((d) => d.spec.template.spec.containers.some((c) => c.name === 'eoswatch'));
  assert.equal(withSidecar.length, 1, `${rel(dir)}: expected one Deployment with a container named eoswatch, found ${withSidecar.length}`);
  const dep = withSidecar[0]!;
  const pod = dep.spec.template.spec;
  const eoswatch = pod.containers.find((c) => c.name === 'eoswatch')!;
  const sm = only<ServiceMonitor>(objs, 'ServiceMonitor');
  // Prometheus Operator scrapes every Service the ServiceMonitor selects: exactly the metrics one.
  const scraped = ofKind<Service>('Service').filter((s) => Object.entries(sm.spec.selector.matchLabels ?? {}).every(([k, v]) => s.metadata.labels?.[k] === v));
  assert.equal(
    scraped.length,
    1,
    `${rel(dir)}: the ServiceMonitor selects ${scraped.length} Services (${scraped.map((s) => s.metadata.name).join(', ')}), expected the metrics Service only`,
  );
  const svc = scraped[0]!;
  const docker = dockerfileFacts();

  /** The volume mounted at (a directory above) a path inside a container of a pod. */
  function volumeAt(path: string, c: Container, p: PodSpec): { volume: Volume; inVolume: string } {
    const mount = (c.volumeMounts ?? [])
      .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
      .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
    assert.ok(mount, `${path}: no volumeMount of the ${c.name} container holds it`);
    assert.equal(mount.subPath, undefined, `${path}: subPath mounts never see ConfigMap updates; mount the directory`);
    const volume = p.volumes?.find((v) => v.name === mount.name);
    assert.ok(volume, `${path}: volume ${mount.name} is not defined in the pod of ${c.name}`);
    return { volume, inVolume: posix.relative(mount.mountPath, path) };
  }

  /** What a path inside a container (by default eoswatch) is backed by: a ConfigMap or Secret key. */
  function backing(path: string, c: Container = eoswatch, p: PodSpec = pod): { volume: Volume; key: string; content?: string } {
    const { volume, inVolume } = volumeAt(path, c, p);
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
      assert.ok(cm, `${path}: ConfigMap ${volume.configMap.name} is not in ${rel(dir)}`);
      const content = cm.data?.[key];
      assert.ok(content !== undefined, `${path}: ConfigMap ${cm.metadata.name} has no key ${key}`);
      return { volume, key, content };
    }
    return { volume, key };
  }

  /** A container's environment (eoswatch's with the image's ENV); a Secret reference becomes "secret:<name>/<key>". */
  function containerEnv(c: Container): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = c === eoswatch ? { ...docker.env } : {};
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
    const path = configPath(eoswatch);
    const { content } = backing(path);
    return withTempDir(async (tmp) => {
      const file = join(tmp, 'eoswatch.yaml');
      writeFileSync(file, content ?? '');
      return validConfig(file, containerEnv(eoswatch), `the ConfigMap's ${path}`);
    });
  }

  /** A Secret of secret.example.yaml by name (never applied: it holds placeholders). */
  function exampleSecret(name: string): Secret {
    const found = objectsIn(SECRET_EXAMPLE).filter((o) => o.obj.kind === 'Secret' && o.obj.metadata.name === name);
    assert.equal(found.length, 1, `${rel(SECRET_EXAMPLE)} has no Secret ${name}`);
    return found[0]!.obj as Secret;
  }

  return { dir, objs, ofKind, deployments, dep, pod, eoswatch, sm, svc, docker, volumeAt, backing, containerEnv, configPath, sidecarConfig, exampleSecret };
}
export type SidecarExample = ReturnType<typeof sidecarExample>;

// ---------------------------------------------------------------------------------------------

export interface ComposeService {
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
export interface Compose {
  services: Record<string, ComposeService>;
}

export const compose = (): Compose => parse(readFileSync(COMPOSE_FILE, 'utf8')) as Compose;

export function composeEnv(s: ComposeService): NodeJS.ProcessEnv {
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
export function bindMounts(s: ComposeService): { host: string; target: string; spec: string }[] {
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
export function hostPathOf(s: ComposeService, containerPath: string): string | undefined {
  const m = bindMounts(s)
    .filter((b) => containerPath === b.target || containerPath.startsWith(`${b.target.replace(/\/$/, '')}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  return m ? join(m.host, posix.relative(m.target, containerPath)) : undefined;
}

export const durationSeconds = (d: string | undefined, dflt: number): number => {
  if (!d) return dflt;
  let total = 0;
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  for (const m of d.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * units[m[2]!]!;
  return total;
};

export const text = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(' ') : v ?? '');

export function serviceByImage(c: Compose, prefix: string): [string, ComposeService] {
  const found = Object.entries(c.services).filter(([, s]) => s.image?.startsWith(prefix));
  assert.equal(found.length, 1, `expected one service with image ${prefix}*, found ${found.map(([n]) => n).join(', ') || 'none'}`);
  return found[0]!;
}
