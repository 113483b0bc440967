// Java `.properties` files as java.util.Properties.load reads them, because that is how Kafka
// clients, Kafka Streams and the Kafka CLI tools read the files we audit: a value we parse
// differently from Java would be audited as something the client never sees.
import { readFile } from 'node:fs/promises';
import { isSecretKey } from '../../redact.js';
import { EosError, ErrorCodes } from '../../errors.js';

export interface ConfigProblem {
  /** 1-based line in the file. */
  line: number;
  /** Names the file and the line, e.g. `producer.properties:7: ...`. */
  message: string;
}

export interface ParsedProperties {
  props: Map<string, string>;
  /** 1-based line where each key's logical line starts (the last definition: last wins, as Java). */
  lines: Map<string, number>;
  problems: ConfigProblem[];
}

interface LogicalLine {
  text: string;
  line: number;
  /** Continuation lines whose text starts like a setting of its own (`name.with.dots=`): the name and the line. */
  gluedSettings: { name: string; line: number }[];
}

/** A Kafka-style setting name at the start of a line, before its separator. */
const SETTING_START = /^([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)[ \t\f]*[=:]/;

// Whitespace as Properties.load defines it (not \s: no vertical tab, no Unicode spaces).
const isWhite = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\f';

/** Joins continuation lines the way java.util.Properties.LineReader does. */
function logicalLines(text: string): LogicalLine[] {
  const natural = text.split(/\r\n|\r|\n/);
  const out: LogicalLine[] = [];
  let current: LogicalLine | undefined;
  for (let i = 0; i < natural.length; i++) {
    const raw = natural[i]!;
    let start = 0;
    while (isWhite(raw[start])) start++;
    let body = raw.slice(start);
    if (current === undefined) {
      // Only the first line of a logical line can be blank or a comment; a comment's trailing
      // backslash does not continue it.
      if (body === '' || body[0] === '#' || body[0] === '!') continue;
      current = { text: '', line: i + 1, gluedSettings: [] };
    } else if (body === '') {
      // A blank line after a continuation ends the logical line (Java's appendedLineBegin).
      out.push(current);
      current = undefined;
      continue;
    }
    let backslashes = 0;
    for (let j = body.length - 1; j >= 0 && body[j] === '\\'; j--) backslashes++;
    const continues = backslashes % 2 === 1;
    if (continues) body = body.slice(0, -1);
    if (current.text !== '') {
      const glued = SETTING_START.exec(body);
      if (glued) current.gluedSettings.push({ name: glued[1]!, line: i + 1 });
    }
    current.text += body;
    // At end of input Java drops the dangling backslash and keeps the line.
    if (!continues || i === natural.length - 1) {
      out.push(current);
      current = undefined;
    }
  }
  return out;
}

class MalformedEscape extends Error {}

/** Properties.loadConvert: resolves escapes; `\x` for any other x is x. */
function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    i++;
    if (i >= s.length) break; // dangling backslash at end of input
    const e = s[i]!;
    switch (e) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        const hex = s.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new MalformedEscape(`\\u${hex}`);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 4;
        break;
      }
      default: out += e;
    }
  }
  return out;
}

/** Splits a logical line at the first unescaped `=`, `:` or whitespace (Properties.load0). */
function splitKeyValue(line: string): { key: string; value: string } {
  let keyLen = 0;
  let valueStart = line.length;
  let hasSep = false;
  let escaped = false;
  for (; keyLen < line.length; keyLen++) {
    const c = line[keyLen]!;
    if ((c === '=' || c === ':') && !escaped) {
      valueStart = keyLen + 1;
      hasSep = true;
      break;
    }
    if (isWhite(c) && !escaped) {
      valueStart = keyLen + 1;
      break;
    }
    escaped = c === '\\' ? !escaped : false;
  }
  // Whitespace around the separator is dropped, and one `=`/`:` after whitespace is the separator.
  while (valueStart < line.length) {
    const c = line[valueStart]!;
    if (!isWhite(c)) {
      if (!hasSep && (c === '=' || c === ':')) hasSep = true;
      else break;
    }
    valueStart++;
  }
  return { key: line.slice(0, keyLen), value: line.slice(valueStart) };
}

/** A key fit for a message: a plain property name as it is, anything else (it may be glued to a secret) not at all. */
function describeKey(key: string): string {
  return /^[A-Za-z][A-Za-z0-9._-]{0,100}$/.test(key) && !isSecretKey(key) ? key : 'this entry';
}

export function parseProperties(text: string, file: string): ParsedProperties {
  const props = new Map<string, string>();
  const lines = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  // Java does not skip a byte order mark: the first key silently gets it as a prefix.
  if (text.startsWith('\uFEFF') || text.startsWith('\u00EF\u00BB\u00BF')) {
    problems.push({ line: 1, message: `${file}:1: starts with a UTF-8 byte order mark, which Java reads as part of the first key` });
  }
  for (const { text: logical, line, gluedSettings } of logicalLines(text)) {
    const { key, value } = splitKeyValue(logical);
    for (const g of gluedSettings) {
      // Names only: the glued text is often the secret (sasl.jaas.config=... password="...").
      problems.push({
        line: g.line,
        message: `${file}:${g.line}: this line (${g.name}) is not a setting of its own: the line before ends with \\, so Java reads it as part of the entry of line ${line} (remove the trailing backslash)`,
      });
    }
    let k: string;
    let v: string;
    try {
      k = unescape(key);
    } catch (err) {
      if (!(err instanceof MalformedEscape)) throw err;
      // Java's load() throws and loads nothing; we skip this entry only so the rest is still audited.
      // Neither the key nor the value is quoted: after a stray continuation or a missing separator
      // the key itself can hold a secret (a JAAS password).
      problems.push({ line, message: `${file}:${line}: malformed \\uXXXX escape in the key of this entry; the entry is ignored` });
      continue;
    }
    try {
      v = unescape(value);
    } catch (err) {
      if (!(err instanceof MalformedEscape)) throw err;
      problems.push({ line, message: `${file}:${line}: malformed \\uXXXX escape in the value of ${describeKey(k)}; the entry is ignored` });
      continue;
    }
    props.set(k, v);
    lines.set(k, line);
  }
  return { props, lines, problems };
}

/** Reads a file for a parser; the error names the path and the reason. */
export async function readConfigText(path: string, encoding: BufferEncoding): Promise<string> {
  try {
    return await readFile(path, { encoding });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file'
      : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
      : code === 'EISDIR' ? 'is a directory'
      : err instanceof Error ? err.message : String(err);
    throw new EosError(ErrorCodes.CONFIG_NOT_FOUND, `cannot read ${path}: ${reason}`, { cause: err });
  }
}

/** Properties.load(InputStream) reads ISO-8859-1, and so do Kafka's tools: we decode the same way. */
export async function readPropertiesFile(path: string): Promise<ParsedProperties> {
  return parseProperties(await readConfigText(path, 'latin1'), path);
}
