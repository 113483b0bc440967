// The network faults a scenario injects into one round on the networked cluster: partitions
// between brokers and workers, a link set down, slow and lossy links. Each fault opens a window
// (./windows.ts) that the heal closes, so the report can say when it started, when it healed and
// how long the pipeline took to commit again. The packets are cut by ClusterNetwork
// (harness/localcluster/network.ts); the runner's own clients (progress, verification) keep their
// link, as a test's control node does.
import type { ClusterNetwork, Cut, SlowLinks } from '../localcluster/network.js';
import type { FaultWindow } from './windows.js';
import { harnessStep } from './verdict.js';

export class RoundNetwork {
  readonly windows: FaultWindow[] = [];

  constructor(
    private readonly net: ClusterNetwork,
    /** Records a fault or a heal in the round's fault list (with the progress at that moment). */
    private readonly onFault: (what: string) => void,
  ) {}

  /** The endpoint of a broker. */
  broker(id: number): string {
    return `n${id}`;
  }

  /** The endpoint of a worker (by the runner's worker name). */
  worker(name = 'main'): string {
    return `w${name}`;
  }

  /** Creates a worker's namespace (before the worker starts in it); its address, which the runner reaches over the never-cut harness link. */
  async addWorker(name: string): Promise<string> {
    return (await harnessStep(`creating the namespace of worker ${name}`, () => this.net.endpoint(this.worker(name)))).addr;
  }

  /** Runs a command in a worker's namespace. */
  wrapWorker(name: string): (cmd: string, args: string[]) => [string, string[]] {
    return (cmd, args) => this.net.wrap(this.worker(name), cmd, args);
  }

  private open(fault: string): void {
    this.windows.push({ fault, startedAt: Date.now(), healedAt: null });
    this.onFault(fault);
  }

  private closeOpen(what: string): void {
    const now = Date.now();
    for (const w of this.windows) if (w.healedAt === null) w.healedAt = now;
    this.onFault(what);
  }

  /** Every endpoint of `a` cut off from every endpoint of `b`, both ways. */
  async partition(fault: string, a: string[], b: string[]): Promise<void> {
    await harnessStep(`network: ${fault}`, () => this.net.partition(a, b));
    this.open(fault);
  }

  /** Directed cuts: only packets from `from` to `to` are dropped. */
  async cut(fault: string, cuts: Cut[]): Promise<void> {
    await harnessStep(`network: ${fault}`, () => this.net.cut(cuts));
    this.open(fault);
  }

  async linkDown(fault: string, endpoint: string): Promise<void> {
    await harnessStep(`network: ${fault}`, () => this.net.link(endpoint, false));
    this.open(fault);
  }

  /** Every cut removed, every link up again: closes the open windows. */
  async heal(what = 'healed'): Promise<void> {
    await harnessStep(`network: ${what}`, () => this.net.heal());
    this.closeOpen(what);
  }

  /** Slow, lossy links between all endpoints; a window that stays open until the end of the round. */
  async slow(fault: string, spec: SlowLinks): Promise<void> {
    await harnessStep(`network: ${fault}`, () => this.net.slow(spec));
    this.open(fault);
  }

  /** A packet delayer that died while it should slow a link (the fault was not what it claimed). */
  get failure(): string | null {
    return this.net.failure;
  }

  /** Back to a whole, fast network for the next round. */
  async reset(): Promise<void> {
    await harnessStep('resetting the network', () => this.net.reset());
  }
}
