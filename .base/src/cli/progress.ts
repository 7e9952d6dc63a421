/**
 * A progress bar on stderr for long commands. On a terminal it redraws one line in place
 * (`label [#########.........] 45%  detail`); when stderr is a file or a pipe it prints a plain
 * line at each quarter instead, so logs stay readable. Never writes to stdout, so a command's
 * output can still be piped.
 */

/** Where the bar draws: process.stderr, or a stand-in in tests. */
export interface ProgressSink {
  write(text: string): unknown;
  /** True on a terminal; redraws need one. */
  isTTY?: boolean | undefined;
  /** Terminal width, when known. */
  columns?: number | undefined;
}

export interface ProgressOptions {
  /** What is being done, at the start of the line. */
  label: string;
  /** The amount that means done (samples, seconds, jobs). */
  total: number;
  sink?: ProgressSink | undefined;
  /** Redraws at most this often on a terminal (default 80 ms). */
  minIntervalMs?: number | undefined;
  /** The clock (ms), for tests. */
  now?: (() => number) | undefined;
  /** No output at all (`--quiet`). */
  silent?: boolean | undefined;
}

const BAR_WIDTH = 28;
const QUARTERS = [25, 50, 75] as const;

/** Renders the bar text for `fraction` in [0, 1]: '[#######.....]  58%'. */
export function renderBar(fraction: number, width = BAR_WIDTH): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const filled = Math.round(f * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(f * 100)).padStart(3)}%`;
}

/** A progress bar; update() as work is done, finish() once at the end. */
export class ProgressBar {
  readonly #label: string;
  readonly #total: number;
  readonly #sink: ProgressSink;
  readonly #tty: boolean;
  readonly #minInterval: number;
  readonly #now: () => number;
  readonly #silent: boolean;
  #lastDraw = Number.NEGATIVE_INFINITY;
  #nextQuarter = 0;
  #finished = false;
  #drawn = false;

  constructor(options: ProgressOptions) {
    this.#label = options.label;
    this.#total = options.total > 0 ? options.total : 1;
    this.#sink = options.sink ?? process.stderr;
    this.#tty = this.#sink.isTTY === true;
    this.#minInterval = options.minIntervalMs ?? 80;
    this.#now = options.now ?? (() => performance.now());
    this.#silent = options.silent === true;
  }

  get isTTY(): boolean {
    return this.#tty;
  }

  /** Reports `done` of `total`, with an optional short detail (rate, counts). */
  update(done: number, detail = ''): void {
    if (this.#silent || this.#finished) return;
    const fraction = Math.min(1, Math.max(0, done / this.#total));
    if (this.#tty) {
      const t = this.#now();
      if (t - this.#lastDraw < this.#minInterval) return;
      this.#lastDraw = t;
      this.#draw(fraction, detail);
      return;
    }
    const percent = fraction * 100;
    while (this.#nextQuarter < QUARTERS.length && percent >= QUARTERS[this.#nextQuarter]!) {
      this.#sink.write(`${this.#label}: ${QUARTERS[this.#nextQuarter]}%${detail ? `  ${detail}` : ''}\n`);
      this.#nextQuarter++;
    }
  }

  #draw(fraction: number, detail: string): void {
    let line = `${this.#label} ${renderBar(fraction)}${detail ? `  ${detail}` : ''}`;
    const columns = this.#sink.columns;
    if (columns !== undefined && columns > 10 && line.length > columns - 1) line = line.slice(0, columns - 1);
    this.#sink.write(`\r\x1b[2K${line}`);
    this.#drawn = true;
  }

  /** Draws 100% and ends the line (or prints the final plain line); later calls do nothing. */
  finish(detail = ''): void {
    if (this.#silent || this.#finished) return;
    this.#finished = true;
    if (this.#tty) {
      this.#draw(1, detail);
      this.#sink.write('\n');
    } else {
      this.#sink.write(`${this.#label}: done${detail ? `  ${detail}` : ''}\n`);
    }
  }

  /** Clears a half-drawn bar (before an error message), so the message starts on its own line. */
  abort(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (!this.#silent && this.#tty && this.#drawn) this.#sink.write('\r\x1b[2K');
  }
}
