/** Progress on stderr while the run goes: phase headers with elapsed time, and each program's own lines. */

export class Progress {
  readonly #t0 = performance.now();
  readonly #write: (text: string) => void;
  #phase = 0;
  #phases: number;

  constructor(phases: number, write: (text: string) => void = (t) => process.stderr.write(t)) {
    this.#phases = phases;
    this.#write = write;
  }

  get elapsedS(): number {
    return (performance.now() - this.#t0) / 1000;
  }

  #stamp(): string {
    return `[bench ${this.elapsedS.toFixed(1).padStart(5)} s]`;
  }

  /** Announces the next phase: `[bench   12.3 s] (3/9) native baseline, pass 1 (16 metrics)`. */
  phase(title: string): void {
    this.#phase++;
    this.#phases = Math.max(this.#phases, this.#phase);
    this.#write(`${this.#stamp()} (${this.#phase}/${this.#phases}) ${title}\n`);
  }

  /** Skips a planned phase without a line of its own (the count stays right). */
  skip(): void {
    this.#phases = Math.max(this.#phase, this.#phases - 1);
  }

  info(line: string): void {
    this.#write(`${this.#stamp()} ${line}\n`);
  }

  /** A line from a program or a benchmark, indented under its phase. */
  detail = (line: string): void => {
    this.#write(`    ${line}\n`);
  };
}
