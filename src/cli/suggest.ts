// "Did you mean": the known word nearest a mistyped command or flag, when one is near enough to be the intent.

/** Edits (insert, delete, replace, swap of neighbours) that turn `a` into `b`. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The candidate closest to `word` within a third of its length (at least 2 edits), or one it begins. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = name.startsWith(word) && word.length >= 3 ? 1 : distance(word, name);
    if (d <= limit && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** " (did you mean X?)" when a candidate is near, else "". */
export function didYouMean(word: string, candidates: Iterable<string>, prefix = ''): string {
  const near = closest(word, candidates);
  return near === undefined ? '' : ` (did you mean ${prefix}${near}?)`;
}
