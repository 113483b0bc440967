// Fetches a Flink runtime from Maven Central into the cache (flink-dist is not published there:
// flink-runtime, flink-streaming-java, flink-clients, flink-runtime-web and the RPC loader stand in
// for it) together with the Kafka connector, and builds the seed's job (flink/job) against it.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheRoot, withLock } from './kafka-dist.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

const run = promisify(execFile);

export interface FlinkLine {
  version: string;
  connector: string;
  /** The connector's KafkaSink can name its transactions from a pool (FLIP-511, TransactionNamingStrategy.POOLING). */
  pooledNaming: boolean;
}

/** One entry per supported Flink line: the runtime version and the matching flink-connector-kafka. */
export const FLINK_LINES: Record<string, FlinkLine> = {
  '1.20': { version: '1.20.3', connector: '3.4.0-1.20', pooledNaming: false },
  '2.2': { version: '2.2.0', connector: '5.0.0-2.2', pooledNaming: true },
};
export const DEFAULT_FLINK_LINE = '1.20';
const LOG4J2_VERSION = '2.24.3';

/** Accepts a line ("1.20") or a full version of a supported line ("1.20.3"). */
export function resolveFlinkLine(v: string = DEFAULT_FLINK_LINE): FlinkLine {
  const line = Object.entries(FLINK_LINES).find(([l, x]) => v === l || v === x.version)?.[1];
  if (!line) {
    throw new EosError(ErrorCodes.USAGE, `Flink version "${v}" is not supported: expected one of ${Object.entries(FLINK_LINES).map(([l, x]) => `${l} (${x.version})`).join(', ')}`);
  }
  return line;
}

export function flinkPom(line: FlinkLine): string {
  const dep = (g: string, a: string, v: string) =>
    `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  const flink = ['flink-runtime', 'flink-streaming-java', 'flink-clients', 'flink-runtime-web', 'flink-rpc-akka-loader', 'flink-connector-base'];
  const deps = [
    ...flink.map((a) => dep('org.apache.flink', a, line.version)),
    dep('org.apache.flink', 'flink-connector-kafka', line.connector),
    dep('org.apache.logging.log4j', 'log4j-slf4j-impl', LOG4J2_VERSION),
    dep('org.apache.logging.log4j', 'log4j-core', LOG4J2_VERSION),
  ];
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>eoswatch.harness</groupId><artifactId>flink-${line.version}</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${deps.join('\n')}
  </dependencies>
</project>
`;
}

async function mvn(args: string[], what: string): Promise<void> {
  try {
    await run('mvn', ['-q', '-B', ...args], { maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    const tail = `${e.stdout ?? ''}${e.stderr ?? ''}`.split('\n').slice(-30).join('\n');
    throw new EosError(ErrorCodes.HARNESS_FAILED, `${what} with Maven failed (is mvn installed and Maven Central reachable?):\n${tail}`, { cause: err });
  }
}

/** Returns the directory holding every jar of the Flink runtime and Kafka connector, fetching them if needed. */
export async function ensureFlink(version?: string): Promise<string> {
  const line = resolveFlinkLine(version);
  const dir = join(cacheRoot(), 'flink', line.version);
  const lib = join(dir, 'lib');
  const marker = join(dir, '.complete');
  if (existsSync(marker)) return lib;
  await mkdir(dir, { recursive: true });
  return withLock(join(dir, '.lock'), async () => {
    if (existsSync(marker)) return lib;
    await rm(lib, { recursive: true, force: true });
    await writeFile(join(dir, 'pom.xml'), flinkPom(line));
    await mvn(
      ['-f', join(dir, 'pom.xml'), 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${lib}`],
      `fetching Flink ${line.version}`,
    );
    const jars = await readdir(lib);
    if (!jars.some((j) => j.startsWith('flink-runtime-'))) throw new EosError(ErrorCodes.HARNESS_FAILED, `Maven finished but ${lib} holds no flink-runtime jar`);
    await writeFile(marker, new Date().toISOString());
    return lib;
  });
}

/** The job module in this repository. */
export function jobModuleDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'flink', 'job');
}

/** Builds the seed's job for a Flink line into the cache, once per content of its sources. */
export async function ensureFlinkJob(version?: string): Promise<string> {
  const line = resolveFlinkLine(version);
  const module = jobModuleDir();
  const sources = [join(module, 'pom.xml'), join(module, 'src/main/java/eoswatch/flink/IncrementJob.java')];
  const hash = createHash('sha256');
  for (const f of sources) hash.update(await readFile(f));
  const out = join(cacheRoot(), 'flink-job', `${line.version}-${hash.digest('hex').slice(0, 12)}`);
  const jar = join(out, 'eoswatch-flink-job.jar');
  if (existsSync(jar)) return jar;
  await mkdir(out, { recursive: true });
  return withLock(join(out, '.lock'), async () => {
    if (existsSync(jar)) return jar;
    await mvn(
      ['-f', join(module, 'pom.xml'), 'package', `-Dflink.version=${line.version}`, `-Dconnector.version=${line.connector}`, `-Djob.build.dir=${join(out, 'build')}`],
      `building the Flink job for ${line.version}`,
    );
    await copyFile(join(out, 'build', 'eoswatch-flink-job.jar'), jar);
    return jar;
  });
}
