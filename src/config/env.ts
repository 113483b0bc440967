// ${VAR} and ${VAR:-default} in string values, expanded after YAML parsing so that an
// environment value can never change the document's structure. $${ is a literal ${.
// Defaults may nest, as in POSIX shells and Compose: ${A:-${B:-x}} is A, else B, else x; a
// default is only expanded when it is used. Anything else after `${` (a bad name, ${A-x},
// ${A:=x}, an unclosed brace) is an error naming the place, never left as silent literal text.
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
/** Deep enough for any real fallback chain, shallow enough that no input can exhaust the stack. */
export const MAX_ENV_NESTING = 8;

export interface EnvProblem {
  path: (string | number)[];
  /** The unset variable, for a reference without a default. */
  variable?: string;
  /** A malformed reference: what was expected, with the character offset in the value. */
  malformed?: string;
}

class Malformed extends Error {}

/**
 * Expands one string. onMissing gets each unset variable that has no default; onExpanded is
 * called when a value from the environment went into the result (the result must then be
 * treated as a secret: error messages show the reference, not the value). Throws Malformed.
 */
function expand(text: string, env: NodeJS.ProcessEnv, onMissing: (variable: string) => void, onExpanded: () => void): string {
  // Returns the text up to the closing brace (nested) or the end (top level), and where it stopped.
  const scan = (i: number, depth: number, active: boolean): [string, number] => {
    let out = '';
    while (i < text.length) {
      const c = text[i]!;
      if (depth > 0 && c === '}') return [out, i];
      if (c === '$' && text[i + 1] === '$' && text[i + 2] === '{') {
        out += '${';
        i += 3;
        continue;
      }
      if (c === '$' && text[i + 1] === '{') {
        const [value, next] = reference(i + 2, depth + 1, active);
        out += value;
        i = next;
        continue;
      }
      out += c;
      i++;
    }
    if (depth > 0) throw new Malformed(`unclosed \${ (a } is missing)`);
    return [out, i];
  };
  const reference = (i: number, depth: number, active: boolean): [string, number] => {
    if (depth > MAX_ENV_NESTING) throw new Malformed(`\${...} nested more than ${MAX_ENV_NESTING} deep`);
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) throw new Malformed(`at character ${i + 1}: expected a variable name ([A-Za-z_][A-Za-z0-9_]*) after \${`);
    const name = m[0];
    let j = i + name.length;
    const value = env[name];
    const set = value !== undefined && value !== '';
    if (text[j] === '}') {
      if (active && set) onExpanded();
      else if (active) onMissing(name);
      return [active && set ? value : '', j + 1];
    }
    if (text.startsWith(':-', j)) {
      const [fallback, close] = scan(j + 2, depth, active && !set);
      j = close + 1;
      if (active && set) onExpanded();
      return [set ? value : fallback, j];
    }
    throw new Malformed(`at character ${j + 1}: expected } or :-default after \${${name} (only \${VAR} and \${VAR:-default} are supported)`);
  };
  return scan(0, 0, true)[0];
}

/** Expands one string; a malformed reference throws an Error saying what was expected (not the text). */
export function expandString(text: string, env: NodeJS.ProcessEnv, onMissing: (variable: string) => void, onExpanded: () => void = () => undefined): string {
  return expand(text, env, onMissing, onExpanded);
}

/**
 * Returns a copy of value with every string expanded, the places whose variable is unset or whose
 * reference is malformed, and the places whose value came (partly) from the environment.
 */
export function expandEnv(
  value: unknown,
  env: NodeJS.ProcessEnv = process.env,
): { value: unknown; problems: EnvProblem[]; fromEnv: (string | number)[][] } {
  const problems: EnvProblem[] = [];
  const fromEnv: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === 'string') {
      try {
        return expand(
          v,
          env,
          (variable) => problems.push({ path, variable }),
          () => fromEnv.push(path),
        );
      } catch (err) {
        if (!(err instanceof Malformed)) throw err;
        problems.push({ path, malformed: err.message });
        return '';
      }
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    }
    return v;
  };
  return { value: walk(value, []), problems, fromEnv };
}
