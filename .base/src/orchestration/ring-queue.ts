/**
 * FIFO queue on a power-of-two ring: push and shift are O(1) with no element moves,
 * which Array#shift on a long array does not guarantee.
 */
export class RingQueue<T> {
  #buffer: (T | undefined)[];
  #mask: number;
  #head = 0;
  #size = 0;

  constructor(initialCapacity = 16) {
    let capacity = 2;
    while (capacity < initialCapacity) capacity *= 2;
    this.#buffer = new Array<T | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
  }

  get length(): number {
    return this.#size;
  }

  push(value: T): void {
    if (this.#size === this.#buffer.length) this.#grow();
    this.#buffer[(this.#head + this.#size) & this.#mask] = value;
    this.#size++;
  }

  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#buffer[this.#head];
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const value = this.#buffer[this.#head];
    // Drop the reference so that settled requests and their arrays can be collected.
    this.#buffer[this.#head] = undefined;
    this.#head = (this.#head + 1) & this.#mask;
    this.#size--;
    return value;
  }

  #grow(): void {
    const old = this.#buffer;
    const grown = new Array<T | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.#size; i++) grown[i] = old[(this.#head + i) & this.#mask];
    this.#buffer = grown;
    this.#mask = grown.length - 1;
    this.#head = 0;
  }
}
