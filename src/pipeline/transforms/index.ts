// Built-in transforms by name, and user modules loaded once at start.
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EosError, ErrorCodes } from '../../errors.js';
import { increment } from './increment.js';
import type { InputRecord, TransformFn, TransformResult } from './types.js';
import type { Logger } from '../../log.js';
import { inProcessTransformer, type Transformer } from './route.js';
import { WorkerTransformer } from './worker.js';

export * from './types.js';
export { inProcessTransformer, type Transformer } from './route.js';

/** Synchronous and known to return valid outputs. */
export const BUILTIN_TRANSFORMS: Record<string, (record: InputRecord) => TransformResult> = {
  increment,
  identity: (r) => ({ key: r.key, value: r.value, headers: stringHeaders(r.headers) }),
};

function stringHeaders(h: Record<string, unknown>): Record<string, Buffer | string> {
  const out: Record<string, Buffer | string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (Buffer.isBuffer(v) || typeof v === 'string') out[k] = v;
    else if (Array.isArray(v) && v.length) out[k] = v[v.length - 1] as Buffer | string;
  }
  return out;
}

/** A module exporting `transform` or a default function `(record) => output`. */
export async function loadTransformModule(path: string, key = 'pipeline.transformModule'): Promise<TransformFn> {
  const abs = isAbsolute(path) ? path : resolve(process.cwd(), path);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (err) {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${key}: cannot load ${abs}: ${(err as Error).message}`, { cause: err });
  }
  const fn = mod.transform ?? mod.default;
  if (typeof fn !== 'function') {
    throw new EosError(ErrorCodes.CONFIG_INVALID, `${key}: ${abs} exports no function; expected \`export function transform(record)\` or a default export`);
  }
  return fn as TransformFn;
}

/**
 * Loads the configured transform, so that a module that cannot be loaded is a configuration
 * error (exit 2) before anything starts, for `run` and `config validate` alike.
 */
export async function checkTransform(pipeline: { enabled: boolean; transform: string; transformModule?: string }, file?: string): Promise<void> {
  if (!pipeline.enabled) return;
  try {
    await resolveTransform(pipeline.transform, pipeline.transformModule);
  } catch (err) {
    if (file && err instanceof EosError) throw new EosError(err.code, `${file}: ${err.message}`, { cause: err.cause });
    throw err;
  }
}

/** The transformer of the pipeline: a built-in runs in-process, a module in a worker thread (src/pipeline/transforms/worker.ts). */
export async function createTransformer(p: { transform: string; transformModule?: string; transformTimeout: number }, logger: Logger): Promise<Transformer> {
  const fn = await resolveTransform(p.transform, p.transformModule);
  if (!p.transformModule) return inProcessTransformer(fn, p.transformTimeout);
  return new WorkerTransformer(p.transformModule, p.transformTimeout, logger);
}

export async function resolveTransform(name: string, modulePath?: string): Promise<TransformFn> {
  if (modulePath) return loadTransformModule(modulePath);
  const fn = BUILTIN_TRANSFORMS[name];
  if (!fn) throw new EosError(ErrorCodes.CONFIG_INVALID, `pipeline.transform: unknown transform "${name}"; expected one of: ${Object.keys(BUILTIN_TRANSFORMS).join(', ')}`);
  return fn;
}
