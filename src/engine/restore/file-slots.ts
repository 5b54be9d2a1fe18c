// Bounds the files a restore writes at once, and lets waiting work back in by batches: once every slot is taken,
// nobody gets one until half of them are free again. Files finish one by one, and handing each freed slot straight
// on would send the pack reader one small file at a time, each costing a read of its own; a batch of files arriving
// together shares reads.

export class FileSlots {
  readonly #slots: number;
  readonly #lowWater: number;
  #used = 0;
  /** set once every slot was taken, until use falls to the low-water mark */
  #full = false;
  readonly #waiters: (() => void)[] = [];

  constructor(slots: number) {
    this.#slots = Math.max(1, slots);
    this.#lowWater = Math.floor(this.#slots / 2);
  }

  async acquire(): Promise<void> {
    if (!this.#full && this.#waiters.length === 0 && this.#used < this.#slots) {
      this.#take();
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    this.#used--;
    if (this.#full && this.#used > this.#lowWater) return;
    this.#full = false;
    while (this.#waiters.length > 0 && !this.#full) {
      this.#take();
      this.#waiters.shift()!();
    }
  }

  #take(): void {
    this.#used++;
    if (this.#used >= this.#slots) this.#full = true;
  }
}
