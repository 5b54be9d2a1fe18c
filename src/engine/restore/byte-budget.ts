// Bounds the plaintext a restore holds between a pack read being started for blobs and the blobs' writers being done
// with them: a read may serve many files at once, so neither the number of reads nor of files bounds memory; these
// bytes do.

export class ByteBudget {
  readonly capacity: number;
  #free: number;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.#free = capacity;
  }

  /**
   * Takes `bytes` if they are free, else nothing. A take larger than the whole budget goes through once all of it is
   * free and leaves the budget overdrawn until it is given back, so every take is given back exactly.
   */
  tryTake(bytes: number): boolean {
    if (this.#free < Math.min(bytes, this.capacity)) return false;
    this.#free -= bytes;
    return true;
  }

  give(bytes: number): void {
    this.#free += bytes;
  }
}
