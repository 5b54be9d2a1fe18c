// Bounds the plaintext a restore holds between a pack read handing a blob over and the blob's writer being done
// with it: a read may serve many files at once, so neither the number of reads nor of files bounds memory; these
// bytes do.

export class ByteBudget {
  readonly #capacity: number;
  #free: number;
  readonly #waiters: { bytes: number; go(): void }[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#free = capacity;
  }

  /**
   * Waits until `bytes` are free, in arrival order. A take larger than the whole budget waits for all of it and
   * leaves the budget overdrawn until it is given back, so every take is given back exactly.
   */
  async take(bytes: number): Promise<void> {
    if (this.#waiters.length === 0 && this.#fits(bytes)) {
      this.#free -= bytes;
      return;
    }
    await new Promise<void>((go) => this.#waiters.push({ bytes, go }));
  }

  /** Takes `bytes` if a take would not wait (as take, it may overdraw an otherwise free budget); else takes nothing. */
  tryTake(bytes: number): boolean {
    if (this.#waiters.length > 0 || !this.#fits(bytes)) return false;
    this.#free -= bytes;
    return true;
  }

  give(bytes: number): void {
    this.#free += bytes;
    while (this.#waiters.length > 0 && this.#fits(this.#waiters[0].bytes)) {
      const w = this.#waiters.shift()!;
      this.#free -= w.bytes;
      w.go();
    }
  }

  #fits(bytes: number): boolean {
    return this.#free >= Math.min(bytes, this.#capacity);
  }
}
