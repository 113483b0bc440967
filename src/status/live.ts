// A block of lines kept up to date on a terminal: redrawn in place while nothing else was
// written below it, printed afresh after other output (log lines) so that nothing is overwritten.
// Not a terminal: printed every `everyMs` only, so a captured log stays short but complete.
export class LivePanel {
  private lines = 0;
  private dirty = false;
  private lastAt = -Infinity;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly tty: boolean,
    private readonly everyMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Other output went to the same stream: the next draw must not overwrite it. */
  touched(): void {
    this.dirty = true;
  }

  draw(text: string): void {
    if (!this.tty) {
      if (this.now() - this.lastAt < this.everyMs) return;
      this.lastAt = this.now();
      this.out.write(`${text}\n`);
      return;
    }
    const up = !this.dirty && this.lines > 0 ? `\x1b[${this.lines}A\x1b[J` : '';
    this.out.write(`${up}${text}`);
    this.lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    this.dirty = false;
  }
}
