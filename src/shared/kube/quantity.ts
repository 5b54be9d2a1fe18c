// Kubernetes resource quantities for storage sizes ("10Gi", "500M", "1.5Gi", "1073741824", "1e9"), in bytes.

const suffixes: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function parseQuantity(q: string): number {
  const m = /^([+]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?)$/.exec(q.trim());
  if (!m) throw new Error(`"${q}" is not a Kubernetes quantity (examples: 10Gi, 500Mi, 1073741824)`);
  const value = Number(m[1]) * (m[2] ? 10 ** Number(m[2].slice(1)) : suffixes[m[3] ?? '']);
  return Math.ceil(value);
}

/** The larger of two quantities, as written (undefined ones are ignored). */
export function maxQuantity(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return parseQuantity(b) > parseQuantity(a) ? b : a;
}

/** Bytes as a quantity: whole Gi or Mi when exact, else plain bytes. */
export function formatQuantity(bytes: number): string {
  if (bytes > 0 && bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30}Gi`;
  if (bytes > 0 && bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20}Mi`;
  return String(Math.ceil(bytes));
}
