// zstd for blobs. Compression reuses one zstd context per thread, frame after frame: node:zlib's sync call builds
// a stream object and a fresh context for every input (many times the compression of a 100-byte blob), and for a
// backup of small files that was the largest single cost. node:zlib has no public way to keep a context,
// so the reused one is driven through its stream's handle, as node:zlib's own sync path does; where that handle is
// missing (another Node), every blob takes the public path. Either way the frame is byte for byte the one
// zstdCompressSync writes with compress/zstd.ts's flags and the blob's level (zstd sizes each frame to its input
// when the whole input comes with the end directive), which the tests check.
// Outputs are sized to the blob: node:zlib otherwise collects output in 64 KiB chunks, garbage for small blobs
// that worker threads (small heaps, rare collections) kept by the hundred megabytes.
import { constants, ZstdCompress, zstdCompressSync, ZstdDecompress, zstdDecompressSync } from 'node:zlib';
import { defaultLevel, zstdParams } from '../compress/zstd.ts';

/** node:zlib's smallest output chunk */
const minChunk = 64;

function chunkFor(length: number): number {
  return Math.max(minChunk, length);
}

/**
 * Blobs up to 16 KB (a small file, a small tree) compress at level 1. zstd chooses its parameters by input size,
 * and up to 16 KB its levels 1 to 3 differ only in the match finder: level 3's second hash table and search cost
 * clearly more time for slightly smaller output on real files (Go sources, node_modules, /usr/share and /usr/lib,
 * cut at 16 KB), and nothing on generated logs (level 1 was smaller there). Such blobs are most of a volume's files
 * and little of its bytes; past 16 KB, level 3's larger tables pay for themselves (bench/README.md, "zstd level 1
 * for small blobs").
 */
export const smallBlobMax = 16 << 10;
const smallBlobLevel = 1;

export function blobLevel(length: number): number {
  return length <= smallBlobMax ? smallBlobLevel : defaultLevel;
}

/** The parts of a node:zlib stream its sync path uses (not public API). */
interface ZlibHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
  onerror: (message: string) => void;
}

class FrameCompressor {
  readonly #handle: ZlibHandle;
  /** [output bytes left, input bytes left] after each write */
  readonly #state: Uint32Array;
  #out = Buffer.allocUnsafeSlow(64 << 10);
  #failure: string | undefined;
  /** a context that reported an error is not used again (a failed one cannot be reset) */
  broken = false;

  constructor(handle: ZlibHandle, state: Uint32Array) {
    this.#handle = handle;
    this.#state = state;
    handle.onerror = (message) => {
      this.#failure = message;
    };
  }

  /** The frame, or undefined when it would not be smaller than the input. */
  compress(plain: Uint8Array): Uint8Array | undefined {
    if (this.#out.length < plain.length) this.#out = Buffer.allocUnsafeSlow(plain.length);
    const length = this.compressInto(plain, this.#out, 0);
    return length === undefined ? undefined : Buffer.from(this.#out.subarray(0, length));
  }

  /** Writes the frame at `out[at..]` (room for `plain.length` bytes); its length, or undefined when not smaller. */
  compressInto(plain: Uint8Array, out: Uint8Array, at: number): number | undefined {
    this.#failure = undefined;
    this.#handle.writeSync(constants.ZSTD_e_end, plain, 0, plain.length, out, at, plain.length);
    let [outLeft, inLeft] = this.#state;
    if (this.#failure === undefined && outLeft > 0 && inLeft === 0) return plain.length - outLeft;
    // No smaller than the input. The frame is finished into the scratch output, so the context starts the next one
    // clean: node:zlib's reset would give the stream a new zstd context with zstd's defaults, not this level.
    while (this.#failure === undefined && (outLeft === 0 || inLeft !== 0)) {
      this.#handle.writeSync(
        constants.ZSTD_e_end,
        plain,
        plain.length - inLeft,
        inLeft,
        this.#out,
        0,
        this.#out.length,
      );
      [outLeft, inLeft] = this.#state;
    }
    if (this.#failure !== undefined) {
      this.broken = true;
      throw new Error(`zstd failed to compress a blob: ${this.#failure}`);
    }
    return undefined;
  }
}

/** The handle and write state of a node:zlib stream, or undefined where this Node does not have them. */
function handleOf(stream: ZstdCompress | ZstdDecompress): { handle: ZlibHandle; state: Uint32Array } | undefined {
  const inner = stream as unknown as { _handle?: Partial<ZlibHandle>; _writeState?: unknown };
  const handle = inner._handle;
  if (typeof handle?.writeSync !== 'function' || !(inner._writeState instanceof Uint32Array)) return undefined;
  return { handle: handle as ZlibHandle, state: inner._writeState };
}

function newFrameCompressor(level: number): FrameCompressor | undefined {
  const h = handleOf(new ZstdCompress({ params: zstdParams(level) }));
  return h && new FrameCompressor(h.handle, h.state);
}

/** one reused context per level, made on first use and again after a failure; false: this Node has no handle */
const frames = new Map<number, FrameCompressor | false>();

function compressor(level: number): FrameCompressor | undefined {
  let c = frames.get(level);
  if (c === undefined || (c && c.broken)) frames.set(level, (c = newFrameCompressor(level) ?? false));
  return c || undefined;
}

/** A zstd frame of `plain`, or undefined when it would not be smaller (the blob is then stored raw). */
export function compressBlob(plain: Uint8Array): Uint8Array | undefined {
  const level = blobLevel(plain.length);
  const c = compressor(level);
  if (c !== undefined) return c.compress(plain);
  const z = zstdCompressSync(plain, {
    pledgedSrcSize: plain.length,
    chunkSize: chunkFor(plain.length),
    params: zstdParams(level),
  });
  return z.length < plain.length ? z : undefined;
}

/**
 * `compressBlob` writing the frame into `out` at `at`, which must leave room for `plain.length` bytes: the frame's
 * length, or undefined when it would not be smaller.
 */
export function compressBlobInto(plain: Uint8Array, out: Uint8Array, at: number): number | undefined {
  const c = compressor(blobLevel(plain.length));
  if (c !== undefined) return c.compressInto(plain, out, at);
  const z = compressBlob(plain);
  if (z === undefined) return undefined;
  out.set(z, at);
  return z.length;
}

/**
 * Past this size a blob decompresses straight into its own buffer: a reused context would need a copy out of its
 * shared output, which for big blobs costs more than the context it saves.
 */
const reuseBelow = 128 << 10;

/**
 * A blob's plaintext of known length; throws when the frame does not decompress to exactly that. Small blobs go
 * through one reused context (restore and tree loads open thousands); frames from storage were authenticated by
 * their MAC before they get here, and any irregularity drops the context and repeats the work on a fresh one,
 * which throws the precise error.
 */
export function decompressBlob(body: Uint8Array, uncompressedLength: number): Uint8Array {
  const reused = uncompressedLength <= reuseBelow ? fromStorage.read(body, uncompressedLength) : undefined;
  return reused !== undefined ? Buffer.from(reused) : decompressFresh(body, uncompressedLength);
}

function decompressFresh(body: Uint8Array, uncompressedLength: number): Uint8Array {
  const exact = uncompressedLength > 0 ? decompressExact(body, uncompressedLength) : undefined;
  if (exact !== undefined) return exact;
  // node's own call, which throws the precise error
  const out = zstdDecompressSync(body, {
    maxOutputLength: Math.max(uncompressedLength, 1),
    chunkSize: chunkFor(uncompressedLength),
  });
  if (out.length !== uncompressedLength)
    throw new Error(`decompressed ${out.length} bytes where the index promised ${uncompressedLength}`);
  return out;
}

const spare = Buffer.alloc(1);

/**
 * `frame` decompressed into a buffer of its own of exactly `length` bytes, or undefined when the frame does not fill
 * it exactly (or fails). zstdDecompressSync with an output chunk of the promised length fills that chunk and then
 * allocates a second one for the output that never comes, and hands back a buffer a collection frees; this costs one
 * allocation, which the writer can free once written (release). A context of its own each time, so that no state
 * carries over from one frame to the next: a big blob costs far more than a context.
 */
function decompressExact(frame: Uint8Array, length: number): Uint8Array | undefined {
  const stream = new ZstdDecompress();
  try {
    const h = handleOf(stream);
    if (!h) return undefined;
    let failed = false;
    h.handle.onerror = () => {
      failed = true;
    };
    const out = Buffer.allocUnsafeSlow(length);
    let inAt = 0;
    let outAt = 0;
    // zstd may stop short of either end (a block at a time); each call goes on from where the last one left off
    while (outAt < length) {
      h.handle.writeSync(constants.ZSTD_e_end, frame, inAt, frame.length - inAt, out, outAt, length - outAt);
      const [outLeft, inLeft] = h.state;
      const consumed = frame.length - inAt - inLeft;
      const produced = length - outAt - outLeft;
      if (failed || (consumed === 0 && produced === 0)) return undefined;
      inAt += consumed;
      outAt += produced;
    }
    // the rest of the frame (its end, a checksum) must bring no more output: a frame longer than promised shows here
    h.handle.writeSync(constants.ZSTD_e_end, frame, inAt, frame.length - inAt, spare, 0, 1);
    return !failed && h.state[0] === 1 && h.state[1] === 0 ? out : undefined;
  } finally {
    stream.close();
  }
}

/**
 * Decompresses a frame this thread has just written, for the read-back before upload, into a buffer reused from
 * call to call: valid only until the next call. Reuses one zstd context as compression does; any irregularity
 * (an error, output or input left over) drops that context and repeats the work on a fresh one, which throws the
 * precise error.
 */
export function decompressOwnFrame(body: Uint8Array, uncompressedLength: number): Uint8Array {
  return readBack.read(body, uncompressedLength) ?? decompressFresh(body, uncompressedLength);
}

class FrameReader {
  readonly #handle: ZlibHandle;
  readonly #state: Uint32Array;
  #out = Buffer.allocUnsafeSlow(64 << 10);
  #failed = false;

  constructor(handle: ZlibHandle, state: Uint32Array) {
    this.#handle = handle;
    this.#state = state;
    handle.onerror = () => {
      this.#failed = true;
    };
  }

  decompress(frame: Uint8Array, length: number): Uint8Array | undefined {
    if (this.#out.length < length + 1) this.#out = Buffer.allocUnsafeSlow(length + 1);
    // one byte of room past the promised length, so a frame longer than promised shows as output left over
    this.#handle.writeSync(constants.ZSTD_e_end, frame, 0, frame.length, this.#out, 0, length + 1);
    const [outLeft, inLeft] = this.#state;
    if (this.#failed || outLeft !== 1 || inLeft !== 0) return undefined;
    return this.#out.subarray(0, length);
  }
}

function newFrameReader(): FrameReader | undefined {
  const h = handleOf(new ZstdDecompress());
  return h && new FrameReader(h.handle, h.state);
}

/** One reused decompression context, dropped after any irregularity (a failed context cannot be reset). */
class ReusedReader {
  /** null: not made yet (or dropped after a failure); false: this Node has no handle to reuse */
  #reader: FrameReader | false | null = null;

  /** The plaintext in the context's output buffer (valid until the next call), or undefined: use a fresh context. */
  read(body: Uint8Array, uncompressedLength: number): Uint8Array | undefined {
    this.#reader ??= newFrameReader() ?? false;
    if (this.#reader === false) return undefined;
    const out = this.#reader.decompress(body, uncompressedLength);
    if (out === undefined) this.#reader = null;
    return out;
  }
}

const readBack = new ReusedReader();
const fromStorage = new ReusedReader();
