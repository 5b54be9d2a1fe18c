// The bounds of a chunk's size in restic's chunker: part of the format (restic cuts the same chunks), and all that
// code outside the chunker needs of it, so buffers can be sized without loading the Rabin kernels.
export const minChunkSize = 512 * 1024;
export const maxChunkSize = 8 * 1024 * 1024;
