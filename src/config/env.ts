// ${VAR} and ${VAR:-default} in string values, expanded after YAML parsing so that an
// environment value can never change the document's structure. $${VAR} is a literal ${VAR}.
const REF = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface EnvProblem {
  path: (string | number)[];
  variable: string;
}

export function expandString(
  text: string,
  env: NodeJS.ProcessEnv,
  onMissing: (variable: string) => void,
): string {
  return text.replace(REF, (whole, escaped: string | undefined, name: string, fallback: string | undefined) => {
    if (escaped) return whole.slice(1);
    const v = env[name];
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    onMissing(name);
    return '';
  });
}

/** Returns a copy of value with every string expanded, and the places whose variable is unset. */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv = process.env): { value: unknown; problems: EnvProblem[] } {
  const problems: EnvProblem[] = [];
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === 'string') return expandString(v, env, (variable) => problems.push({ path, variable }));
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...path, k])]));
    }
    return v;
  };
  return { value: walk(value, []), problems };
}
