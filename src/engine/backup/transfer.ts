// ArrayBuffers that may be moved to another thread: only ones a view owns whole. Node's small Buffers share a
// pool, and transferring that would pull the ground from under every other Buffer in the thread.
export function transferList(views: Uint8Array[]): ArrayBuffer[] {
  return views
    .filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength)
    .map((v) => v.buffer as ArrayBuffer);
}
