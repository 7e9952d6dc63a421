/**
 * The most recent `capacity` samples of a per-item measurement. Items of one request share a
 * value, so a request records its value once with a count (a fill, not a loop of pushes).
 */
const SMALL_COUNT = 16;

/** The latest N samples (weighted), for percentiles over a bounded window. */
export class SampleWindow {
  readonly #values: Float64Array;
  #next = 0;
  #size = 0;

  constructor(capacity: number) {
    this.#values = new Float64Array(capacity);
  }

  record(value: number, count: number): void {
    const capacity = this.#values.length;
    if (count >= capacity) {
      this.#values.fill(value);
      this.#next = 0;
      this.#size = capacity;
      return;
    }
    const end = this.#next + count;
    if (count <= SMALL_COUNT && end <= capacity) {
      // TypedArray#fill's call overhead dominates for a few elements (submitOne records one).
      const values = this.#values;
      for (let i = this.#next; i < end; i++) values[i] = value;
    } else if (end <= capacity) {
      this.#values.fill(value, this.#next, end);
    } else {
      this.#values.fill(value, this.#next, capacity);
      this.#values.fill(value, 0, end - capacity);
    }
    this.#next = end % capacity;
    this.#size = Math.min(capacity, this.#size + count);
  }

  /** Nearest-rank percentiles (fractions in [0, 1]) of the window; 0 when it is empty. */
  percentiles(fractions: readonly number[]): number[] {
    const size = this.#size;
    if (size === 0) return fractions.map(() => 0);
    const sorted = this.#values.slice(0, size).sort();
    return fractions.map((p) => sorted[Math.min(size - 1, Math.max(0, Math.ceil(p * size) - 1))] ?? 0);
  }
}
