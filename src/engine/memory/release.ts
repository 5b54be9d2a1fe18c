// Frees a large buffer's memory at once instead of at some later collection. V8 frees an ArrayBuffer's memory
// only when a collection finds it dead, and a buffer that outlived two scavenges waits for a full collection: the
// pack buffers and index files of a backup of tiny files stood as garbage for seconds, tens of megabytes at a time.
// Transferring the ArrayBuffer away detaches it; with nothing left referring to the memory, it is freed there and
// then (and, being above malloc's mmap threshold, given back to the system).

/**
 * Releases `bytes`' memory now. The caller must hold the only reference to that memory, with no I/O still reading
 * it; every view of it reads as empty afterwards, so take what is needed from them first. Views that share their
 * ArrayBuffer with other data (Node's pool of small buffers) are left alone.
 */
export function release(bytes: Uint8Array): void {
  const ab = bytes.buffer;
  if (!(ab instanceof ArrayBuffer) || bytes.byteOffset !== 0 || bytes.byteLength !== ab.byteLength || ab.detached)
    return;
  ab.transfer(0);
}
