// Progress of a backup or restore, reported through a callback a few times a second at most.

export interface Progress {
  filesDone: number;
  bytesDone: number;
  /** totals grow while the scanner walks ahead of the backup; `totalsFinal` says when they stopped growing */
  filesTotal: number;
  bytesTotal: number;
  totalsFinal: boolean;
  currentPath: string;
  /** bytes that had to be stored because they were new */
  bytesAdded: number;
}

export type ProgressFn = (p: Readonly<Progress>) => void;

export function newProgress(): Progress {
  return {
    filesDone: 0,
    bytesDone: 0,
    filesTotal: 0,
    bytesTotal: 0,
    totalsFinal: false,
    currentPath: '',
    bytesAdded: 0,
  };
}

/** Calls `fn` at most every `everyMs`, plus once at the end through `flush()`. */
export function throttled(fn: ProgressFn | undefined, p: Progress, everyMs = 250): { tick(): void; flush(): void } {
  let last = 0;
  return {
    tick() {
      if (!fn) return;
      const now = Date.now();
      if (now - last >= everyMs) {
        last = now;
        fn(p);
      }
    },
    flush() {
      fn?.(p);
    },
  };
}
