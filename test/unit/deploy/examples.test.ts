// The deployment examples under deploy/ stay consistent with the rest of the repository: every
// YAML parses; each Kubernetes sidecar example (next to a Kafka Streams workload, next to a Flink
// JobManager) lists its manifests in its kustomization, its ConfigMap holds a config the project's own validation
// accepts, its Service/ServiceMonitor/Deployment selectors, ports and probes line up, no secret is
// in plain text, the files it audits pass the audit and its PrometheusRule is
// alerts/eoswatch.rules.yml; the Flink cluster's JobManager, TaskManagers, Services, ports, memory
// and checkpoint storage fit together; the compose file mounts files that exist, its
// eoswatch config validates, Prometheus loads the rules file it mounts and scrapes eoswatch, and
// Grafana provisions the dashboard with a datasource its `datasource` variable can pick.
// No Docker, no Kubernetes cluster and no process: what kubectl renders and what promtool
// says of the Prometheus config are checked by test/integration/deploy.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { parse } from 'yaml';
import { runAudit } from '../../../src/audit/runner.js';
import { flinkSource, propertiesSource } from '../../../src/audit/sources/files.js';
import { parseFlinkConfig, parseFlinkDuration } from '../../../src/audit/parsers/flink-config.js';
import { ALL_CHECKS } from '../../../src/audit/checks/index.js';
import { loadWebConfig } from '../../../src/http/web-config.js';
import bcrypt from 'bcryptjs';
import { makeTestPki } from '../../harness/tls.js';
import {
  DEPLOY,
  K8S,
  K8S_FLINK,
  SECRET_EXAMPLE,
  FLINK_HOME,
  COMPOSE_DIR,
  RULES,
  DASHBOARD,
  read,
  rel,
  yamlFiles,
  yamlDocs,
  isObject,
  kustomization,
  flinkBytes,
  k8sBytes,
  only,
  assertSubset,
  validConfig,
  withTempDir,
  dockerfileFacts,
  exporterJobRegex,
  isPortOf,
  sidecarExample,
  compose,
  composeEnv,
  bindMounts,
  hostPathOf,
  durationSeconds,
  text,
  serviceByImage,
  type K8sObject,
  type Probe,
  type Container,
  type PodSpec,
  type Deployment,
  type Service,
  type PersistentVolumeClaim,
  type ServiceMonitor,
  type RuleGroup,
  type SidecarExample,
} from '../../harness/deploy.js';

// ---------------------------------------------------------------------------------------------

describe('deploy: every YAML file parses', () => {
  const files = yamlFiles(DEPLOY);

  test('there are Kubernetes and compose files', () => {
    const names = files.map(rel);
    for (const f of ['deploy/kubernetes/kustomization.yaml', 'deploy/kubernetes/flink/kustomization.yaml', 'deploy/compose/compose.yaml', 'deploy/compose/prometheus.yml']) {
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

/** The tests every sidecar example passes (kubectl kustomize renders it: test/integration/deploy.test.ts). */
function sidecarTests(ex: SidecarExample): void {
  const { dir, objs, dep, pod, eoswatch, sm, svc, docker, backing, configPath, sidecarConfig, exampleSecret } = ex;
  const applied = objs.filter((o) => o.file !== SECRET_EXAMPLE);

  test('kustomization.yaml lists every manifest except the example Secret, and sets the eoswatch image', () => {
    const k = kustomization(dir);
    for (const r of k.resources) assert.ok(existsSync(join(dir, r)), `kustomization resource ${r} does not exist`);
    const listed = k.resources.filter((r) => statSync(join(dir, r)).isFile());
    for (const r of k.resources.filter((x) => !listed.includes(x))) assert.ok(existsSync(join(dir, r, 'kustomization.yaml')), `${r} is a directory but no kustomization`);
    const manifests = [...new Set(objs.filter((o) => dirname(o.file) === dir).map((o) => posix.basename(o.file)))].filter((f) => f !== posix.basename(SECRET_EXAMPLE));
    assert.deepEqual([...listed].sort(), manifests.sort());
    const kindsListed = applied.map((o) => o.obj.kind);
    for (const kind of ['Deployment', 'ConfigMap', 'Service', 'ServiceMonitor', 'PrometheusRule']) assert.ok(kindsListed.includes(kind), `no ${kind} in the kustomization`);
    assert.ok(!kindsListed.includes('Secret'), 'a Secret with a placeholder password must not be applied');
    const [imageName, imageTag] = eoswatch.image.split(':');
    const image = k.images?.find((i) => i.name === imageName);
    assert.ok(image, `kustomization images has no entry for ${imageName}`);
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    assert.equal(imageTag, version, 'the eoswatch image tag is the package version');
    assert.equal(image.newTag, version, 'kustomization newTag is the package version');
  });

  test('the PrometheusRule spec.groups are exactly the groups of alerts/eoswatch.rules.yml', () => {
    const rule = only<K8sObject & { spec: { groups: RuleGroup[] } }>(objs, 'PrometheusRule');
    const file = objs.find((o) => o.obj === rule)!.file;
    assert.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
    const groups = (parse(read(RULES)) as { groups: RuleGroup[] }).groups;
    assert.ok(groups.length > 0 && groups.every((g) => g.rules.length > 0));
    assert.deepEqual(rule.spec.groups, groups, `${rel(file)} is out of date: copy the groups of ${RULES} into its spec.groups`);
  });

  test('the ConfigMap holds a valid eoswatch config that fits the pod', async () => {
    const config = await sidecarConfig();
    const metrics = eoswatch.ports?.find((p) => p.name === 'metrics');
    assert.ok(metrics, 'the eoswatch container has no port named metrics');
    assert.equal(metrics.containerPort, 7395);
    assert.equal(config.http.port, metrics.containerPort, 'http.port is the container port');
    assert.ok(!['127.0.0.1', 'localhost', '::1'].includes(config.http.host), `http.host ${config.http.host}: probes and Prometheus come from outside the container`);
    // Containers of a pod share its ports: none may take eoswatch's.
    const ports = pod.containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
    assert.equal(new Set(ports).size, ports.length, `two containers of the pod claim the same port: ${ports.join(', ')}`);
    const grace = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
    assert.ok(config.shutdown.gracePeriod < grace, `shutdown.gracePeriod ${config.shutdown.gracePeriod} ms must be below terminationGracePeriodSeconds (${grace} ms)`);
  });

  test('the SASL password comes from a Secret through KAFKA_SASL_PASSWORD', async () => {
    const cm = backing(configPath(eoswatch)).content ?? '';
    assert.match(cm, /password:\s*\$\{KAFKA_SASL_PASSWORD\}/, 'the config references ${KAFKA_SASL_PASSWORD}');
    const env = eoswatch.env?.find((e) => e.name === 'KAFKA_SASL_PASSWORD');
    const ref = env?.valueFrom?.secretKeyRef;
    assert.ok(ref, 'KAFKA_SASL_PASSWORD must come from a secretKeyRef');
    const config = await sidecarConfig();
    assert.equal((config.kafka.sasl as { password?: string } | undefined)?.password, `secret:${ref.name}/${ref.key}`);
    const example = exampleSecret(ref.name);
    assert.ok({ ...example.data, ...example.stringData }[ref.key] !== undefined, `secret.example.yaml has no key ${ref.key}`);
  });

  test('every file the config names is mounted into the sidecar', async () => {
    const config = await sidecarConfig();
    const files = [
      config.kafka.ssl.caFile,
      config.kafka.ssl.certFile,
      config.kafka.ssl.keyFile,
      config.pipeline.transformModule,
      config.http.webConfigFile,
      config.flink.tls.caFile,
      ...config.audit.producerConfigs,
      ...config.audit.consumerConfigs,
      ...config.audit.streamsConfigs,
      ...config.audit.flinkConfigs,
    ].filter((f): f is string => typeof f === 'string');
    assert.ok(files.length >= 3, `expected at least the CA, the web config and an audited file, found ${files.join(', ')}`);
    for (const f of files) backing(f);
  });

  test('the endpoints are secured: HTTPS and basic auth from a valid web config, Prometheus has the credentials, probes use the open paths', async () => {
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

  test('probes: readiness /readyz and liveness /healthz on the metrics port; every probe of the example on a port of its container', () => {
    const ready = eoswatch.readinessProbe?.httpGet;
    const live = eoswatch.livenessProbe?.httpGet;
    assert.ok(ready && live, 'httpGet readiness and liveness probes');
    assert.equal(ready?.path, '/readyz');
    assert.equal(live?.path, '/healthz');
    assert.equal(isPortOf(eoswatch, ready.port), 7395, `readiness port ${ready.port}`);
    assert.equal(isPortOf(eoswatch, live.port), 7395, `liveness port ${live.port}`);
    for (const d of ex.deployments) {
      assertSubset(d.spec.selector.matchLabels, d.spec.template.metadata.labels, `${d.metadata.name}: Deployment selector vs pod labels`);
      for (const c of d.spec.template.spec.containers) {
        for (const probe of [c.readinessProbe, c.livenessProbe].filter((x): x is Probe => x !== undefined)) {
          const port = probe.httpGet?.port ?? probe.tcpSocket?.port;
          assert.ok(port !== undefined, `${d.metadata.name}/${c.name}: a probe without httpGet or tcpSocket`);
          assert.ok(isPortOf(c, port) !== undefined, `${d.metadata.name}/${c.name}: probe port ${port} is not a port of the container`);
        }
      }
    }
  });

  test('the sidecar uses the Dockerfile image contract: config path, non-root, read-only root, resources', () => {
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
}

describe('deploy/kubernetes: sidecar example', () => {
  const ex = sidecarExample(K8S);
  sidecarTests(ex);
  const { pod, eoswatch, backing, sidecarConfig } = ex;

  test('the workload mounts the client files eoswatch audits, and they pass the audit', async () => {
    const config = await sidecarConfig();
    const audited: { role: 'producer' | 'consumer' | 'streams'; path: string }[] = [
      ...config.audit.producerConfigs.map((path) => ({ role: 'producer' as const, path })),
      ...config.audit.consumerConfigs.map((path) => ({ role: 'consumer' as const, path })),
      ...config.audit.streamsConfigs.map((path) => ({ role: 'streams' as const, path })),
    ];
    assert.ok(audited.length > 0, 'the sidecar example audits the workload configuration');
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
});

describe('deploy/kubernetes/flink: eoswatch next to a Flink JobManager', () => {
  const ex = sidecarExample(K8S_FLINK);
  sidecarTests(ex);
  const { objs, pod, backing, volumeAt, containerEnv, sidecarConfig } = ex;

  /** The Flink containers of a Deployment's pod started as `role` (the image entrypoint's first argument). */
  const flinkContainers = (role: string): { c: Container; p: PodSpec; d: Deployment }[] =>
    ex.deployments.flatMap((d) => d.spec.template.spec.containers.filter((c) => c.args?.[0] === role).map((c) => ({ c, p: d.spec.template.spec, d })));
  const jms = flinkContainers('jobmanager');
  const tms = flinkContainers('taskmanager');

  /** The Flink configuration a Flink container reads ($FLINK_CONF_DIR/config.yaml), as Flink flattens it. */
  function flinkConf(c: Container, p: PodSpec): { path: string; configMap: string; key: string; content: string; props: Map<string, string> } {
    const path = `${containerEnv(c).FLINK_CONF_DIR ?? `${FLINK_HOME}/conf`}/config.yaml`;
    const b = backing(path, c, p);
    assert.ok(b.volume.configMap && b.content !== undefined, `${c.name}: ${path} does not come from a ConfigMap`);
    const parsed = parseFlinkConfig(b.content, path);
    assert.deepEqual(parsed.problems.map((x) => x.message), [], `${c.name}: ${path} parses without problems`);
    return { path, configMap: b.volume.configMap.name, key: b.key, content: b.content, props: parsed.props };
  }

  test('one JobManager, in the pod of the sidecar; TaskManagers of the same image', () => {
    assert.equal(jms.length, 1, `expected one jobmanager container, found ${jms.length}`);
    assert.ok(pod.containers.includes(jms[0]!.c), 'the JobManager runs in the pod of the eoswatch sidecar');
    assert.equal(jms[0]!.d.spec.replicas ?? 1, 1, 'one JobManager (no Flink high availability here)');
    assert.match(jms[0]!.c.image, /^flink:1\.20\b/, 'the official Flink 1.20 image (the config keys are those of 1.20)');
    assert.ok(tms.length > 0, 'no TaskManager');
    for (const tm of tms) assert.equal(tm.c.image, jms[0]!.c.image, `${tm.d.metadata.name}: another Flink image than the JobManager's`);
    assert.ok(!tms.some((tm) => tm.p.containers.some((c) => c.name === 'eoswatch')), 'one eoswatch per Flink cluster, next to the JobManager');
  });

  test('eoswatch watches the Flink job only: flink on, own pipeline off, the sink measured and audited', async () => {
    const config = await sidecarConfig();
    assert.equal(config.flink.enabled, true, 'flink.enabled');
    assert.equal(config.pipeline.enabled, false, 'pipeline.enabled: the Flink job is the pipeline');
    assert.equal(config.canary.enabled, false, 'no canary writing into the job\'s topics');
    assert.ok(config.flink.jobs.names.length + config.flink.jobs.ids.length > 0, 'the job is selected by name or id');
    assert.ok(config.flink.sinks.length > 0, 'flink.sinks: the visibility latency of the job\'s sink');
    for (const sink of config.flink.sinks) {
      const re = new RegExp(`^(?:${sink.job})$`);
      assert.ok(config.flink.jobs.names.some((n) => re.test(n)), `flink.sinks job ${sink.job} is none of the watched jobs ${config.flink.jobs.names.join(', ')}`);
      for (const t of sink.topics) assert.ok(config.audit.topics.includes(t), `the sink topic ${t} is not audited (audit.topics)`);
    }
    // The LSO monitor labels the sink topic's series with pipeline.name; the job's series carry its name.
    assert.ok(config.flink.jobs.names.includes(config.pipeline.name), `pipeline.name ${config.pipeline.name} is not the watched job's name`);
    // The sink's transactions stay open for a checkpoint: an LSO held that long is no hanging one.
    const { props } = flinkConf(jms[0]!.c, jms[0]!.p);
    const interval = props.get('execution.checkpointing.interval');
    assert.ok(interval, 'execution.checkpointing.interval is not set');
    // Flink's default checkpoint timeout: 10 min.
    const checkpoint = parseFlinkDuration(interval) + parseFlinkDuration(props.get('execution.checkpointing.timeout') ?? '10 min');
    assert.equal(config.lsoMonitor.enabled, true);
    assert.ok(
      config.lsoMonitor.hangingAfter > checkpoint,
      `lsoMonitor.hangingAfter ${config.lsoMonitor.hangingAfter} ms is within a checkpoint's interval + timeout (${checkpoint} ms): every checkpoint would look hanging`,
    );
  });

  test('the REST URL is the JobManager container\'s REST port, on the loopback of the pod', async () => {
    const config = await sidecarConfig();
    const jm = jms[0]!.c;
    const { props } = flinkConf(jm, jms[0]!.p);
    const restPort = Number(props.get('rest.bind-port') ?? props.get('rest.port') ?? '8081');
    assert.ok(Number.isInteger(restPort), `rest.bind-port "${props.get('rest.bind-port')}": one port, not a range`);
    assert.equal(isPortOf(jm, restPort), restPort, `the jobmanager container does not declare the REST port ${restPort}`);
    const bind = props.get('rest.bind-address');
    assert.ok(bind === undefined || ['0.0.0.0', '127.0.0.1', 'localhost'].includes(bind), `rest.bind-address ${bind} is not reachable on the pod's loopback`);
    const scheme = props.get('rest.ssl.enabled') === 'true' ? 'https:' : 'http:';
    assert.ok(config.flink.restUrls.length > 0, 'flink.restUrls');
    for (const url of config.flink.restUrls) {
      const u = new URL(url);
      assert.ok(['127.0.0.1', 'localhost'].includes(u.hostname), `${url}: the JobManager is in the same pod (loopback), not behind a Service`);
      assert.equal(u.protocol, scheme, `${url}: the REST API speaks ${scheme}`);
      assert.equal(Number(u.port || (u.protocol === 'https:' ? 443 : 80)), restPort, `${url}: not the JobManager's REST port ${restPort}`);
    }
  });

  test('eoswatch audits the Flink configuration the JobManager runs with, and it passes the audit', async () => {
    const config = await sidecarConfig();
    assert.ok(config.audit.flinkConfigs.length > 0, 'audit.flinkConfigs');
    const jm = flinkConf(jms[0]!.c, jms[0]!.p);
    for (const path of config.audit.flinkConfigs) {
      const b = backing(path);
      assert.deepEqual([b.volume.configMap?.name, b.key], [jm.configMap, jm.key], `${path} in the sidecar is not the JobManager's ${jm.path}`);
    }
    await withTempDir(async (dir) => {
      // Named as eoswatch names it: the file name decides between flink-conf.yaml and config.yaml.
      const file = join(dir, posix.basename(config.audit.flinkConfigs[0]!));
      writeFileSync(file, jm.content);
      const report = await runAudit([flinkSource(file)], ALL_CHECKS);
      const failed = report.findings.filter((f) => !f.passed).map((f) => `${f.severity} ${f.check}: ${f.observed}`);
      assert.deepEqual(failed, [], 'the example Flink configuration is exactly-once safe');
      const passed = new Set(report.findings.filter((f) => f.passed).map((f) => f.check));
      for (const id of [
        'checkpoint.mode',
        'checkpoint.tolerable-failures',
        'checkpoint.retain-on-cancellation',
        'checkpoint.timeout',
        'checkpoint.min-pause',
        'checkpoint.max-concurrent',
        'checkpoint.state-backend',
      ]) {
        assert.ok(passed.has(id), `${id} did not judge the file (passed: ${[...passed].join(', ')})`);
      }
    });
  });

  test('the Flink cluster fits together: JobManager Service, ports, TaskManagers on the same configuration', () => {
    const jm = jms[0]!;
    const conf = flinkConf(jm.c, jm.p);
    const address = conf.props.get('jobmanager.rpc.address');
    const jmSvc = ex.ofKind<Service>('Service').find((s) => s.metadata.name === address);
    assert.ok(jmSvc, `jobmanager.rpc.address ${address} is no Service of the example`);
    assertSubset(jmSvc.spec.selector, jm.d.spec.template.metadata.labels, 'JobManager Service selector vs JobManager pod labels');
    for (const tm of tms) {
      const labels = tm.d.spec.template.metadata.labels;
      assert.ok(Object.entries(jmSvc.spec.selector).some(([k, v]) => labels[k] !== v), `the JobManager Service also selects the TaskManagers of ${tm.d.metadata.name}`);
    }
    assert.equal(jmSvc.spec.publishNotReadyAddresses, true, 'the eoswatch sidecar\'s readiness must not take the JobManager out of its Service');
    // What TaskManagers and clients reach through the Service: Flink's fixed ports.
    for (const [key, fallback] of [['jobmanager.rpc.port', '6123'], ['blob.server.port', undefined], ['rest.port', '8081']] as const) {
      const port = Number(conf.props.get(key) ?? fallback);
      // blob.server.port has no fixed default: Flink picks a random port, which no Service can name.
      assert.ok(Number.isInteger(port) && port > 0, `${key}: expected one fixed port, found ${conf.props.get(key)}`);
      const sp: Service['spec']['ports'][number] | undefined = jmSvc.spec.ports.find((x) => x.port === port);
      assert.ok(sp, `Service ${jmSvc.metadata.name} has no port ${port} (${key})`);
      assert.equal(isPortOf(jm.c, sp.targetPort ?? sp.port), port, `Service port ${sp.name} targets ${sp.targetPort}, not the JobManager's ${key} ${port}`);
    }
    for (const f of [jm, ...tms]) {
      const env = containerEnv(f.c).JOB_MANAGER_RPC_ADDRESS;
      if (env !== undefined) assert.equal(env, address, `${f.d.metadata.name}: JOB_MANAGER_RPC_ADDRESS differs from jobmanager.rpc.address`);
    }
    for (const tm of tms) {
      const t = flinkConf(tm.c, tm.p);
      assert.deepEqual([t.configMap, t.key], [conf.configMap, conf.key], `${tm.d.metadata.name} reads another Flink configuration than the JobManager`);
      const rpc = Number(t.props.get('taskmanager.rpc.port'));
      assert.equal(isPortOf(tm.c, rpc), rpc, `${tm.d.metadata.name}: taskmanager.rpc.port ${t.props.get('taskmanager.rpc.port')} is not a port of the container`);
    }
  });

  test('each Flink process fits its container\'s memory limit', () => {
    for (const [role, list] of [['jobmanager', jms], ['taskmanager', tms]] as const) {
      for (const f of list) {
        const size = flinkConf(f.c, f.p).props.get(`${role}.memory.process.size`);
        assert.ok(size, `${role}.memory.process.size is not set: Flink's default does not know the container's limit`);
        const limit = f.c.resources?.limits?.memory;
        assert.ok(limit, `${f.d.metadata.name}/${f.c.name}: no memory limit`);
        assert.ok(flinkBytes(size) <= k8sBytes(limit), `${role}.memory.process.size ${size} is above the container's memory limit ${limit}`);
      }
    }
  });

  test('checkpoints and savepoints are on storage every Flink process shares', () => {
    const { props } = flinkConf(jms[0]!.c, jms[0]!.p);
    for (const key of ['execution.checkpointing.dir', 'execution.checkpointing.savepoint-dir']) {
      const url = props.get(key);
      assert.ok(url, `${key} is not set`);
      assert.match(url, /^file:\/\//, `${key}: this example keeps checkpoints on a volume`);
      const path = new URL(url).pathname;
      const claims = new Set(
        [...jms, ...tms].map((f) => {
          const { volume } = volumeAt(path, f.c, f.p);
          assert.ok(volume.persistentVolumeClaim, `${f.d.metadata.name}: ${path} is on ${volume.name}, not a PersistentVolumeClaim (lost with the pod)`);
          return volume.persistentVolumeClaim.claimName;
        }),
      );
      assert.equal(claims.size, 1, `${key}: the Flink processes write to different volumes (${[...claims].join(', ')})`);
      const pvc = objs.find((o) => o.obj.kind === 'PersistentVolumeClaim' && o.obj.metadata.name === [...claims][0])?.obj as PersistentVolumeClaim | undefined;
      assert.ok(pvc, `PersistentVolumeClaim ${[...claims][0]} is not in the example`);
      assert.ok(pvc.spec.accessModes.includes('ReadWriteMany'), `${pvc.metadata.name}: pods on several nodes write to it, so ReadWriteMany`);
    }
  });
});

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
