// Fetches the Kafka broker and tools jars from Maven Central into a cache directory outside
// git, once per version. There is no Docker engine and no download from project websites on
// the machines this runs on, so Maven is the only way to get a real broker.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EosError, ErrorCodes } from '../../src/errors.js';
import { startTimeOf } from '../../src/runtime/proc.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';

const run = promisify(execFile);

export const DEFAULT_KAFKA_VERSION = '4.4.0';
export const SUPPORTED_KAFKA_LINES = ['3.9', '4.'] as const;

/** log4j2 binding versions for Kafka 4.x (3.9 ships reload4j). */
const LOG4J2_VERSION = '2.24.3';

export function cacheRoot(): string {
  return process.env.EOSWATCH_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'eoswatch');
}

export function isKafka4(version: string): boolean {
  return Number(version.split('.')[0]) >= 4;
}

export function assertSupportedVersion(version: string): void {
  if (!/^\d+\.\d+\.\d+$/.test(version) || !SUPPORTED_KAFKA_LINES.some((l) => version.startsWith(l))) {
    throw new EosError(ErrorCodes.USAGE, `Kafka version "${version}" is not supported: expected 3.9.x or 4.x.y`);
  }
}

export function pomFor(version: string): string {
  const dep = (g: string, a: string, v: string) =>
    `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>`;
  const deps = [dep('org.apache.kafka', 'kafka_2.13', version), dep('org.apache.kafka', 'kafka-tools', version)];
  if (isKafka4(version)) {
    deps.push(dep('org.apache.logging.log4j', 'log4j-slf4j-impl', LOG4J2_VERSION));
    deps.push(dep('org.apache.logging.log4j', 'log4j-core', LOG4J2_VERSION));
  }
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>eoswatch.harness</groupId><artifactId>kafka-${version}</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${deps.join('\n')}
  </dependencies>
</project>
`;
}

/**
 * Whether a lock directory's holder is gone: its `owner` file names a pid and start time that no
 * longer run. A lock without an owner file (being created, or from an older eoswatch) is not judged.
 */
export function lockHolderGone(ownerText: string | null, startTimeOfPid: (pid: number) => number | null): boolean {
  const m = /^(\d+) (\d+)$/.exec(ownerText?.trim() ?? '');
  if (!m) return false;
  const now = startTimeOfPid(Number(m[1]));
  return now === null || now !== Number(m[2]);
}

export async function withLock<T>(lockDir: string, fn: () => Promise<T>): Promise<T> {
  const owner = join(lockDir, 'owner');
  // Taken (true), held by another (undefined: asked again), or an error other than "exists".
  const take = async (): Promise<true | { error: unknown } | undefined> => {
    try {
      await mkdir(lockDir);
      await writeFile(owner, `${process.pid} ${startTimeOf(process.pid) ?? 0}\n`);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return { error: err };
      // A holder killed without its finally (SIGKILL) leaves the lock behind: taken over, not waited 15 minutes for.
      if (!lockHolderGone(await readFile(owner, 'utf8').catch(() => null), startTimeOf)) return undefined;
      await rm(lockDir, { recursive: true, force: true });
      return take();
    }
  };
  const taken = await pollUntil(`the lock ${lockDir}`, take, { timeoutMs: 15 * 60_000, intervalMs: 500 }).catch((err: unknown) => {
    if (!(err instanceof PollTimeoutError)) throw err;
    throw new EosError(ErrorCodes.HARNESS_FAILED, `timed out waiting for lock ${lockDir}; remove it if no fetch is running`);
  });
  if (taken !== true) throw taken?.error;
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Returns the directory holding every jar of the given Kafka version, fetching it if needed. */
export async function ensureKafka(version: string = DEFAULT_KAFKA_VERSION): Promise<string> {
  assertSupportedVersion(version);
  const dir = join(cacheRoot(), 'kafka', version);
  const libs = join(dir, 'libs');
  const marker = join(dir, '.complete');
  if (existsSync(marker)) return libs;
  await mkdir(dir, { recursive: true });
  return withLock(join(dir, '.lock'), async () => {
    if (existsSync(marker)) return libs;
    await rm(libs, { recursive: true, force: true });
    await writeFile(join(dir, 'pom.xml'), pomFor(version));
    try {
      await run(
        'mvn',
        [
          '-q',
          '-B',
          '-f',
          join(dir, 'pom.xml'),
          'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
          '-DincludeScope=runtime',
          `-DoutputDirectory=${libs}`,
        ],
        { maxBuffer: 64 * 1024 * 1024 },
      );
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      const tail = `${e.stdout ?? ''}${e.stderr ?? ''}`.split('\n').slice(-30).join('\n');
      throw new EosError(ErrorCodes.HARNESS_FAILED, `fetching Kafka ${version} with Maven failed (is mvn installed and Maven Central reachable?):\n${tail}`, {
        cause: err,
      });
    }
    const jars = await readdir(libs);
    if (!jars.some((j) => j.startsWith('kafka_2.13-'))) throw new EosError(ErrorCodes.HARNESS_FAILED, `Maven finished but ${libs} holds no kafka_2.13 jar`);
    await writeFile(marker, new Date().toISOString());
    return libs;
  });
}
