// How the report writes its figures: each formatter leaves a figure not measured in this run blank (or a dash, for
// a ratio to a peer that did not run), and a verdict is undefined, not false, when its figure is missing.

export const MiB = 2 ** 20;

/** MiB, one decimal below 10 */
export const mib = (n: number | undefined): string => (n === undefined ? '' : (n / MiB).toFixed(n < 10 * MiB ? 1 : 0));
export const num = (n: number | undefined, digits = 2): string => (n === undefined ? '' : n.toFixed(digits));
/** a ratio, or a dash when the peer did not run */
export const times = (n: number | undefined): string => (n === undefined ? '-' : `${n.toFixed(2)}x`);
export const mbps = (n: number | undefined): string => (n === undefined ? '' : (n / 1e6).toFixed(n < 10e6 ? 2 : 0));

/** whether `v` meets the goal `ok`, or undefined when it was not measured */
export const judge = (v: number | undefined, ok: (v: number) => boolean): boolean | undefined =>
  v === undefined ? undefined : ok(v);
