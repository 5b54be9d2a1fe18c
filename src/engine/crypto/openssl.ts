// Poly1305 and AES-256-CTR through the OpenSSL that Node itself is linked with (EVP_MAC "POLY1305", EVP_CIPHER
// "AES-256-CTR"), reached through koffi. On one core of the bench machine OpenSSL's Poly1305 ran 11.7 GB/s against the
// WebAssembly kernel's 1.25 GB/s, and AES-CTR decrypting in place 0.14 ms per MiB against node:crypto's 0.62 (whose
// update() returns a new buffer: most of that is allocating and faulting in fresh memory). They were the largest
// per-byte costs of a restore. Each call crosses the FFI two or three times (about 1.7 us), so short messages stay
// with the other kernels (mac.ts, ctr.ts). Bound once per thread, once enough bytes came by to pay for it; where
// Node's OpenSSL symbols or koffi cannot be reached it is undefined and the other kernels do all the work, with the
// same results.
import { createRequire } from 'node:module';

export interface OpenSSL {
  /** the 16-byte Poly1305 tag of `msg` under a 32-byte one-time key */
  poly1305(msg: Uint8Array, oneTimeKey: Uint8Array): Uint8Array;
  /** `data` XOR the AES-256-CTR keystream of `key` from `iv`, written over `data` */
  aesCTRInPlace(key: Uint8Array, iv: Uint8Array, data: Uint8Array): void;
}

let bound: OpenSSL | null | undefined;

/** Node's OpenSSL, or undefined when this process cannot reach it. */
export function openssl(): OpenSSL | undefined {
  if (bound === undefined) bound = bind();
  return bound ?? undefined;
}

/**
 * Loading koffi and binding costs a thread about 10 ms of CPU, what the other kernels spend on some 10 MiB: a
 * command that only reads a repository's small files (its snapshots, keys, index) never earns it back. So OpenSSL
 * binds once this many bytes have gone through the other kernels in this thread.
 */
const bindAfter = 8 << 20;
let bytesBefore = 0;

/** Node's OpenSSL for a message of `length` bytes, once the thread's messages have made binding it worthwhile. */
export function opensslFor(length: number): OpenSSL | undefined {
  if (bound === undefined && (bytesBefore += length) < bindAfter) return undefined;
  return openssl();
}

function bind(): OpenSSL | null {
  try {
    // koffi is CommonJS with a native addon: require keeps its load synchronous, in worker threads too
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // the running program and what it links: Node exports its OpenSSL's symbols (for native addons)
    const lib = koffi.load(null as unknown as string);
    const macFetch = lib.func('void *EVP_MAC_fetch(void *libctx, const char *alg, const char *props)');
    const macCtx = lib.func('void *EVP_MAC_CTX_new(void *mac)');
    const macInit = lib.func('int EVP_MAC_init(void *ctx, const uint8_t *key, size_t keylen, void *params)');
    const macUpdate = lib.func('int EVP_MAC_update(void *ctx, const uint8_t *data, size_t len)');
    const macFinal = lib.func('int EVP_MAC_final(void *ctx, uint8_t *out, _Out_ size_t *outl, size_t outsize)');
    const cipherFetch = lib.func('void *EVP_CIPHER_fetch(void *libctx, const char *alg, const char *props)');
    const cipherCtx = lib.func('void *EVP_CIPHER_CTX_new()');
    const cipherInit = lib.func(
      'int EVP_DecryptInit_ex2(void *ctx, void *cipher, const uint8_t *key, const uint8_t *iv, void *params)',
    );
    const cipherUpdate = lib.func(
      'int EVP_DecryptUpdate(void *ctx, uint8_t *out, _Out_ int *outl, const uint8_t *in, int inl)',
    );
    const mac: unknown = macFetch(null, 'POLY1305', null);
    const mctx: unknown = mac ? macCtx(mac) : null;
    const cipher: unknown = cipherFetch(null, 'AES-256-CTR', null);
    const cctx: unknown = cipher ? cipherCtx() : null;
    if (!mctx || !cctx) return null;
    const outLength = [0];
    return {
      poly1305(msg, oneTimeKey) {
        const tag = new Uint8Array(16);
        // Poly1305_Final wipes the one-time key from the context
        if (
          macInit(mctx, oneTimeKey, 32, null) !== 1 ||
          macUpdate(mctx, msg, msg.length) !== 1 ||
          macFinal(mctx, tag, outLength, 16) !== 1 ||
          outLength[0] !== 16
        )
          throw new Error('OpenSSL could not compute a Poly1305 tag');
        return tag;
      },
      aesCTRInPlace(key, iv, data) {
        // CTR is a stream: the output may overwrite its input; one call takes at most 2^31-1 bytes
        if (
          key.length !== 32 ||
          iv.length !== 16 ||
          data.length > 0x7fffffff ||
          cipherInit(cctx, cipher, key, iv, null) !== 1 ||
          cipherUpdate(cctx, data, outLength, data, data.length) !== 1 ||
          outLength[0] !== data.length
        )
          throw new Error('OpenSSL could not decrypt with AES-256-CTR');
      },
    };
  } catch {
    return null;
  }
}
