// How much a restore keeps in flight: files, plaintext bytes, pack reads and writes. Each figure is a trade of
// memory against speed, measured (bench/README.md); the reasons stand beside them.

/** files being restored at once: enough that the blobs of many small files share pack reads; few enough that their
 * bookkeeping stays small (a restore of a million tiny files peaks higher with twice as many) */
export const filesInFlight = 256;
/** plaintext of the blobs being read or handed over and not yet written: three whole-pack reads of a large file at
 * once (test/unit/restore/large-file.test.ts) */
export const defaultBudget = 64 << 20;
/**
 * The longest pack read: a whole pack (16 MiB, plus the blob that overflows it), so a pack costs one read, as in
 * restic; shorter reads only add reads, at the same peak memory.
 */
export const packRead = 17 << 20;
/**
 * The sealed bytes read ahead and kept for the files to come (see PackReader): two reads. The files an incremental
 * backup changed have their new blobs in the newest packs, so restoring its snapshot goes back and forth between
 * those and the pack the unchanged files around them are in; with one read kept, each changed file evicted that pack
 * and the next file read it again. The second read costs the memory of one more pack read.
 */
export const readAhead = 2 * packRead;
/** files up to this size are written by the small-file thread, whole and with their metadata */
export const smallFile = 64n << 10n;
/**
 * Writes of large files in flight. Each takes one of libuv's four threads, which the pack reads of a local
 * repository need too: with every blob of a file written as soon as it came, a write-back burst (the kernel
 * throttling writers once dirty pages pass its limit) blocked all four threads for seconds while the reads queued
 * behind them, and the restore stood still. With two, the restore keeps working through the bursts and is no slower
 * where no burst comes (bench/README.md, "Restores that stood still").
 */
export const writesInFlight = 2;
