// Whether a restore may leave a backup's all-zero ranges unwritten. A file the restore creates reads as zeros
// wherever nothing was written (holes), so skipping them is free and keeps sparse files sparse. An existing file or
// block device (a restore volume) reads as whatever it held before: a new volume of many storage classes holds the
// previous user's blocks, so its zero ranges are written unless the caller knows the storage zeroes new volumes
// (DataDownload spec.targetPVC.zeroedVolume).

export interface ZeroTarget {
  /** the file or device exists already: it is written in place */
  existing?: boolean;
  /** an existing target that reads as zeros wherever it was not written */
  zeroed?: boolean;
}

/** True when zero ranges may stay unwritten: a new file, or an existing target known to read as zeros. */
export function skipsZeroRanges(target: ZeroTarget): boolean {
  return !target.existing || target.zeroed === true;
}

const zeroChunk = 1 << 20;
let zeros: Buffer | undefined;

/** Writes `length` zero bytes at `offset`, a megabyte at a time from one shared buffer. */
export async function writeZeros(
  fh: { write(buf: Uint8Array, offset: number, length: number, position: number): Promise<unknown> },
  offset: number,
  length: number,
): Promise<void> {
  zeros ??= Buffer.alloc(zeroChunk);
  for (let done = 0; done < length;) {
    const n = Math.min(zeroChunk, length - done);
    await fh.write(zeros, 0, n, offset + done);
    done += n;
  }
}
