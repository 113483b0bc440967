// Process identity (for the tracked processes of ./process.ts: Kafka nodes, Flink JobManager and
// TaskManagers, Streams instances, chaos workers): a process is ours only when its pid is alive AND its start time (field 22 of /proc/<pid>/stat,
// clock ticks since boot) is the one recorded when we started it. A pid the kernel recycled for
// another process has another start time, so it is never signalled or reported as ours.
// The parsing and the judgement are pure; the readers below only read /proc.
import { readdirSync, readFileSync } from 'node:fs';

/** A process as recorded (in a harness's state file, or by the process that started it). */
export interface ProcessRecord {
  pid: number | null;
  /** Start time of that pid (clock ticks since boot); absent in a state file written before it was recorded. */
  startTime?: number | null;
}

export interface ProcStat {
  /** R, S, D… running; T/t stopped (paused); Z zombie; X dead. */
  state: string;
  /** Field 22: start time in clock ticks after boot. */
  startTime: number;
}

/**
 * Parses the text of /proc/<pid>/stat. The command name (field 2) is in parentheses and may hold
 * spaces and ')', so the fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  // After ") ": field 3 (state) is index 0, so field 22 (starttime) is index 19.
  const fields = text.slice(close + 2).trim().split(/\s+/);
  const state = fields[0];
  const startTime = Number(fields[19]);
  if (!state || !Number.isInteger(startTime) || startTime < 0) return null;
  return { state, startTime };
}

export type ProcessStatus = 'running' | 'paused' | 'stopped';

/**
 * What a recorded process is now, given what /proc says of its pid (null: no such pid) and
 * whether its command line still names the harness's files. A recorded start time must match;
 * a record without one (an old state file) falls back to the command line alone.
 */
export function judgeProcess(recorded: ProcessRecord, observed: ProcStat | null, cmdlineMatches: boolean | 'empty'): ProcessStatus {
  if (recorded.pid === null || observed === null) return 'stopped';
  if (observed.state === 'Z' || observed.state === 'X') return 'stopped';
  const timed = recorded.startTime !== undefined && recorded.startTime !== null;
  if (timed && recorded.startTime !== observed.startTime) return 'stopped';
  // An empty command line is a process inside execve (the new image's arguments not yet set up:
  // `ip netns exec` becoming java, seen on a loaded machine as a JVM "exited during start-up"). With
  // its start time matching, pid and start time are the identity; without one, nothing says it is ours.
  if (cmdlineMatches === 'empty' ? !timed : !cmdlineMatches) return 'stopped';
  return observed.state === 'T' || observed.state === 't' ? 'paused' : 'running';
}

export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

export function readCmdline(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
}

/** What the judgement reads of a pid: /proc by default, a table of its own in a unit test. */
export interface ProcReader {
  stat(pid: number): ProcStat | null;
  cmdline(pid: number): string | null;
}

export const systemProc: ProcReader = { stat: readProcStat, cmdline: readCmdline };

/**
 * The live status of a recorded process whose command line must contain `needle` (no needle: pid
 * and start time alone, for a child this process spawned and holds).
 */
export function processStatus(p: ProcessRecord, needle: string | undefined, proc: ProcReader = systemProc): ProcessStatus {
  if (p.pid === null) return 'stopped';
  const cmdline = needle === undefined ? null : proc.cmdline(p.pid);
  return judgeProcess(p, proc.stat(p.pid), needle === undefined ? true : cmdline === '' ? 'empty' : (cmdline?.includes(needle) ?? false));
}

/** The start time of a pid just spawned, to record with it (null when it is already gone). */
export function startTimeOf(pid: number): number | null {
  return readProcStat(pid)?.startTime ?? null;
}

/**
 * Every live process whose command line contains one of `needles`: used after `down` to prove
 * nothing of a cluster is left (and to name what is). It reports, it never signals: a process
 * found this way was not started (or not recorded) by us.
 */
export function processesReferencing(needles: readonly string[]): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const e of entries) {
    if (!/^[0-9]+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    const cmd = readCmdline(pid);
    if (!cmd || !needles.some((n) => cmd.includes(n))) continue;
    const st = readProcStat(pid);
    if (!st || st.state === 'Z' || st.state === 'X') continue;
    found.push({ pid, cmdline: cmd.split('\0').filter(Boolean).join(' ') });
  }
  return found;
}

/** One line naming the survivors for an error message: `pid 123 (java … kafka.Kafka …)`. */
export function describeSurvivors(list: readonly { pid: number; cmdline: string }[]): string {
  return list.map((p) => `pid ${p.pid} (${p.cmdline.length > 160 ? `${p.cmdline.slice(0, 80)} … ${p.cmdline.slice(-70)}` : p.cmdline})`).join(', ');
}
