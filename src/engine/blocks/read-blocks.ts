// Opening a device to read it by a block plan, in a pool worker: the reader counts what it fetches, so the backup
// can report how much of the device it touched.
import type { Chunker } from '../chunker/chunker.ts';
import { openForBackup } from '../backup/open-source.ts';
import { allocatedReader, deviceReader } from './block-reader.ts';
import { changedChunks, type BlockChunk } from './changed-chunks.ts';
import type { BlockPlan } from './plan.ts';

/** Runs `use` over the device's chunks by `plan`; returns the bytes read of the device. */
export async function readBlocks(
  path: Uint8Array,
  plan: BlockPlan,
  use: (chunks: (chunker: Chunker) => AsyncIterable<BlockChunk>) => Promise<void>,
): Promise<number> {
  const fh = await openForBackup(Buffer.from(path.buffer, path.byteOffset, path.byteLength));
  try {
    const device = deviceReader(fh, plan.size);
    const reader = plan.allocated ? allocatedReader(device, plan.allocated) : device;
    await use((chunker) => changedChunks(reader, chunker, { parent: plan.parent, changed: plan.changed ?? [] }));
    return reader.bytesRead;
  } finally {
    await fh.close();
  }
}
