// Replacing one module of kafkajs 2.2.4 (kafkajs has had no release since) by putting its
// replacement in Node's module cache under the module's own file name, before any kafkajs module
// that requires it is loaded: CommonJS modules keep what they required, so a later replacement
// would not reach them. src/kafka/preload.ts installs every replacement; src/cli.ts imports it
// first and the test and benchmark scripts preload it (package.json).
import { Module } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** What a replacement needs of Node's require: resolution and the module cache. */
export type ModuleRequire = Pick<NodeJS.Require, 'resolve' | 'cache'>;

export interface Replacement {
  /** The kafkajs module replaced, e.g. 'kafkajs/src/consumer/filterAbortedMessages.js'. */
  module: string;
  /** Its replacement's exports. */
  exports: unknown;
  /** The kafkajs module that requires it: once that is loaded, a replacement comes too late. */
  requiredBy: string;
  /** The eoswatch file that installs it (named in the error). */
  installer: string;
}

/**
 * Puts `r.exports` in the module cache where `r.requiredBy` will require `r.module`. Idempotent;
 * throws when `r.requiredBy` was loaded before (it keeps the original).
 */
export function replaceModule(req: ModuleRequire, r: Replacement): true {
  const target = req.resolve(r.module);
  if (req.cache[target]?.exports === r.exports) return true;
  if (req.cache[req.resolve(r.requiredBy)]) {
    throw new Error(`${r.installer} was imported after kafkajs was loaded: it must come first (see src/kafka/module-cache.ts)`);
  }
  const m = new Module(target);
  m.filename = target;
  m.loaded = true;
  m.exports = r.exports;
  req.cache[target] = m;
  return true;
}

/**
 * A fresh instance of a module, compiled from its file, whatever the cache holds under its name
 * (its own requires go through the cache as usual): kafkajs' original beside its replacement.
 */
export function loadOriginal(req: ModuleRequire, module: string): unknown {
  const file = req.resolve(module);
  const m = new Module(file) as Module & { _compile(code: string, filename: string): void };
  m.filename = file;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(file));
  m._compile(readFileSync(file, 'utf8'), file);
  return m.exports;
}
