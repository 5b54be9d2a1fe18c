// Bounds the plaintext a restore holds between asking for a blob and writing it: the pack reader may gather many
// requests into one read, so the number of requests no longer bounds memory; their bytes do.

export class ByteBudget {
  readonly #capacity: number;
  #free: number;
  readonly #waiters: { bytes: number; go(): void }[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#free = capacity;
  }

  /** Waits until `bytes` are free (a request larger than the whole budget waits for all of it), in arrival order. */
  async take(bytes: number): Promise<number> {
    const n = Math.min(bytes, this.#capacity);
    if (this.#waiters.length === 0 && this.#free >= n) {
      this.#free -= n;
      return n;
    }
    await new Promise<void>((go) => this.#waiters.push({ bytes: n, go }));
    return n;
  }

  /** Returns what `take` granted. */
  give(granted: number): void {
    this.#free += granted;
    while (this.#waiters.length > 0 && this.#free >= this.#waiters[0].bytes) {
      const w = this.#waiters.shift()!;
      this.#free -= w.bytes;
      w.go();
    }
  }
}
