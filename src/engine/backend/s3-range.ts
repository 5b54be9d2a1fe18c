// The byte ranges of the S3 backend's GETs (`bytes=a-b`, or `bytes=a-` to the end), as it asks for them.

function byteRange(range: string): { start: number; end?: number } | undefined {
  const m = /^bytes=(\d+)-(\d*)$/.exec(range);
  return m ? { start: Number(m[1]), end: m[2] ? Number(m[2]) : undefined } : undefined;
}

/** The length of a range, or undefined (no range, or one open at its end). */
export function rangeLength(range: string | undefined): number | undefined {
  const r = range ? byteRange(range) : undefined;
  return r?.end === undefined ? undefined : r.end - r.start + 1;
}

/**
 * What a server that ignores Range (200 with the whole object) answered, as the range it was asked for: the range cut
 * from the body, and a Content-Range giving the object's size, by which the backend judges a range past the end.
 */
export function wholeAnswer<B extends Uint8Array>(range: string, whole: B): { bytes: B; contentRange: string } {
  const r = byteRange(range);
  if (!r) throw new TypeError(`not a range of bytes: ${range}`);
  const { start, end: last } = r;
  const size = whole.length;
  const end = Math.min(last === undefined ? size : last + 1, size);
  if (start >= end) return { bytes: whole.subarray(0, 0) as B, contentRange: `bytes */${size}` };
  return { bytes: whole.subarray(start, end) as B, contentRange: `bytes ${start}-${end - 1}/${size}` };
}
