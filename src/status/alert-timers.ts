// Pending and firing, as Prometheus judges an alerting rule: a condition that holds at an
// evaluation becomes active then (pending); it fires once it has held at every evaluation for the
// rule's `for:` (at once without one); an evaluation where it does not hold forgets it, so when it
// holds again its timer starts over. Pure: the caller passes the time of each evaluation.
import { MIRRORED_RULES, type MirroredAlert } from './alert-rules.js';

/** An alert condition that holds now (the rule's expression has a result). */
export interface Condition {
  alert: MirroredAlert;
  detail: string;
}

export interface AlertStatus extends Condition {
  state: 'pending' | 'firing';
  /** When the condition started to hold (the first evaluation of this unbroken run). */
  activeSince: string;
  /** How long it has held, at this evaluation. */
  heldSeconds: number;
  /** The rule's `for:` (0: fires as soon as it holds). */
  forSeconds: number;
}

export class AlertTimers {
  private readonly activeAt = new Map<MirroredAlert, number>();

  constructor(private readonly rules: Record<MirroredAlert, { forMs: number }> = MIRRORED_RULES) {}

  /** One evaluation at `nowMs` with the conditions that hold now. */
  evaluate(conditions: Condition[], nowMs: number): AlertStatus[] {
    const holding = new Set(conditions.map((c) => c.alert));
    for (const name of [...this.activeAt.keys()]) if (!holding.has(name)) this.activeAt.delete(name);
    return conditions.map((c) => {
      const since = this.activeAt.get(c.alert) ?? nowMs;
      this.activeAt.set(c.alert, since);
      const forMs = this.rules[c.alert].forMs;
      const held = Math.max(0, nowMs - since);
      return { ...c, state: held >= forMs ? 'firing' : 'pending', activeSince: new Date(since).toISOString(), heldSeconds: held / 1000, forSeconds: forMs / 1000 };
    });
  }
}

/** "5m", "1m 30s", "45s": a `for:` or a held time, for people. */
export function fmtDuration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest ? `${m}m ${rest}s` : `${m}m`;
}

/** "pending 12 s of 5m" or "firing for 6m" */
export function fmtState(a: AlertStatus): string {
  return a.state === 'pending' ? `pending ${fmtDuration(a.heldSeconds)} of ${fmtDuration(a.forSeconds)}` : `firing${a.heldSeconds >= 1 ? ` for ${fmtDuration(a.heldSeconds)}` : ''}`;
}
