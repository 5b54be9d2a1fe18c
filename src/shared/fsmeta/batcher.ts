// Gathers single requests into batches, because the helpers ferry spawns for what Node has no API for
// (getfattr, setfattr) cost a process start each: callers ask per file, one process serves hundreds.
// A batch is flushed when it is full or when the event loop turns, with a bounded number in flight.

export type BatchRunner<In, Out> = (items: In[]) => Promise<Out[]>;

interface Pending<In, Out> {
  item: In;
  resolve(out: Out): void;
  reject(err: unknown): void;
}

export class Batcher<In, Out> {
  readonly #run: BatchRunner<In, Out>;
  readonly #maxItems: number;
  readonly #maxInFlight: number;
  #queue: Pending<In, Out>[] = [];
  #inFlight = 0;
  #scheduled = false;

  /** `run` answers one result per item, in order; a rejection fails every item of that batch. */
  constructor(run: BatchRunner<In, Out>, maxItems = 256, maxInFlight = 2) {
    this.#run = run;
    this.#maxItems = maxItems;
    this.#maxInFlight = maxInFlight;
  }

  request(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#queue.length >= this.#maxItems) return this.#flush();
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#queue.splice(0, this.#maxItems);
      this.#inFlight++;
      this.#run(batch.map((p) => p.item))
        .then((outs) => batch.forEach((p, i) => p.resolve(outs[i])), (err: unknown) => batch.forEach((p) => p.reject(err)))
        .finally(() => {
          this.#inFlight--;
          this.#flush();
        });
    }
  }
}
