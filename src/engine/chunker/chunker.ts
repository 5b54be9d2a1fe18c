// restic's content-defined chunker (github.com/restic/chunker): the same boundaries for the same polynomial, so
// ferry and restic deduplicate against each other.
//
// A chunk ends after the first byte where the Rabin fingerprint of the last 64 bytes has its low 20 bits zero, but
// never before minChunkSize bytes and never after maxChunkSize. Bytes before (minChunkSize - 64) cannot influence
// a boundary, so they are skipped without hashing: only the 64 bytes ending at the earliest allowed cut matter.
import { degree, formatPolynomial, polynomialDegree } from './polynomial.ts';
import type { Polynomial } from './polynomial.ts';
import type { RabinKernel } from './rabin-kernel.ts';
import { JsRabinKernel } from './rabin-js.ts';
import { windowSize } from './rabin-tables.ts';
import { WasmRabinKernel } from './rabin-wasm.ts';
import { maxChunkSize, minChunkSize } from './limits.ts';

/** bytes of a chunk skipped before hashing starts */
const unhashedPrefix = minChunkSize - windowSize;

export interface ChunkerOptions {
  /** 'wasm' (default) or 'js', the plain reference kernel */
  kernel?: 'wasm' | 'js';
}

export class Chunker {
  readonly #kernel: RabinKernel;
  /** bytes of the current chunk seen so far */
  #count = 0;

  constructor(pol: Polynomial, options: ChunkerOptions = {}) {
    if (degree(pol) !== polynomialDegree) {
      // restic only ever creates degree-53 polynomials, and the kernels are built around that width
      throw new Error(
        `Chunker polynomial ${formatPolynomial(pol)} has degree ${degree(pol)}, not ${polynomialDegree}.`,
      );
    }
    this.#kernel = options.kernel === 'js' ? new JsRabinKernel(pol) : new WasmRabinKernel(pol);
  }

  /** Feed consecutive bytes of ONE stream. Returns the index in `data` just past the next boundary found at or
   *  after `from`, or -1 if `data` ends before a boundary (state carries over to the next call). */
  next(data: Uint8Array, from = 0): number {
    const end = data.length;
    if (!(from >= 0 && from <= end))
      throw new RangeError(`Chunker.next: from ${from} is outside the ${end}-byte buffer.`);
    let i = from;
    if (this.#count < unhashedPrefix) {
      const skip = Math.min(unhashedPrefix - this.#count, end - i);
      this.#count += skip;
      i += skip;
      if (this.#count < unhashedPrefix) return -1;
    }
    // the cut may come from the mask (only once the chunk is minChunkSize long) or from the size limit
    const limit = Math.min(end, i + (maxChunkSize - this.#count));
    const firstCheck = i + (minChunkSize - 1 - this.#count);
    const cut = this.#kernel.scan(data, i, limit, firstCheck);
    if (cut >= 0) return this.#cutAt(cut);
    this.#count += limit - i;
    if (this.#count === maxChunkSize) return this.#cutAt(limit);
    return -1;
  }

  /** Start a new stream (also what happens internally after each boundary). */
  reset(): void {
    this.#count = 0;
    this.#kernel.reset();
  }

  #cutAt(index: number): number {
    this.reset();
    return index;
  }
}

/** Convenience: split a byte stream into chunks (the final partial chunk included). Each chunk is a fresh copy, so
 *  the source may reuse its buffers. */
export async function* chunkStream(source: AsyncIterable<Uint8Array>, pol: Polynomial): AsyncGenerator<Uint8Array> {
  const chunker = new Chunker(pol);
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const take = (piece: Uint8Array): Uint8Array => {
    const chunk = new Uint8Array(pendingBytes + piece.length);
    let offset = 0;
    for (const p of pending) {
      chunk.set(p, offset);
      offset += p.length;
    }
    chunk.set(piece, offset);
    pending = [];
    pendingBytes = 0;
    return chunk;
  };
  for await (const data of source) {
    let from = 0;
    for (let cut = chunker.next(data, from); cut >= 0; cut = chunker.next(data, from)) {
      yield take(data.subarray(from, cut));
      from = cut;
    }
    if (from < data.length) {
      // copied now: the source may overwrite its buffer once we ask for the next one (and as a new array: a Buffer's
      // slice() is a view of the same memory)
      pending.push(new Uint8Array(data.subarray(from)));
      pendingBytes += data.length - from;
    }
  }
  if (pendingBytes > 0) yield take(new Uint8Array(0));
}
