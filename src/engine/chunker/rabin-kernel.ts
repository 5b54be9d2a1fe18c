// The contract between the chunker (which tracks chunk sizes) and a kernel (which only rolls the fingerprint).
// A kernel sees the hashed bytes of one chunk, in order, possibly across many calls.

/** restic cuts where the low 20 bits of the fingerprint are zero: about one position in 2^20, ~1 MiB apart. */
export const splitMask = (1 << 20) - 1;

export interface RabinKernel {
  /** Start a chunk's hashed bytes: zero fingerprint over a window of 64 zero bytes. */
  reset(): void;
  /** Rolls over data[start..end). Returns the index just past the first byte at index >= firstCheck after which the
   *  fingerprint matches the split mask (the state is then spent until reset), or -1 once every byte is consumed
   *  (the state then carries over to the next call). */
  scan(data: Uint8Array, start: number, end: number, firstCheck: number): number;
}
