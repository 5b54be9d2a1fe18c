// Poly1305 through the OpenSSL that Node itself is linked with (EVP_MAC "POLY1305"), reached through koffi. Its
// assembly kernels ran 11.7 GB/s on one core of the bench machine against the WebAssembly kernel's 1.25 GB/s, and the
// MAC was the largest per-byte cost of a restore (1.3 of 2.6 ms per MiB a restore spends on its main thread). Each
// call crosses the FFI three times (about 1.7 us), so short messages stay with the WebAssembly kernel (mac.ts).
// Bound once per thread on first use; where Node's OpenSSL symbols or koffi cannot be reached it is undefined and
// the WebAssembly kernel does all the work, computing the same tags.
import { createRequire } from 'node:module';

type Poly1305 = (msg: Uint8Array, oneTimeKey: Uint8Array) => Uint8Array;

let bound: Poly1305 | null | undefined;

/** OpenSSL's Poly1305, or undefined when this process cannot reach it. */
export function poly1305OpenSSL(): Poly1305 | undefined {
  if (bound === undefined) bound = bind();
  return bound ?? undefined;
}

function bind(): Poly1305 | null {
  try {
    // koffi is CommonJS with a native addon: require keeps its load synchronous, in worker threads too
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // the running program and what it links: Node exports its OpenSSL's symbols (for native addons)
    const lib = koffi.load(null as unknown as string);
    const fetch = lib.func('void *EVP_MAC_fetch(void *libctx, const char *alg, const char *props)');
    const newCtx = lib.func('void *EVP_MAC_CTX_new(void *mac)');
    const init = lib.func('int EVP_MAC_init(void *ctx, const uint8_t *key, size_t keylen, void *params)');
    const update = lib.func('int EVP_MAC_update(void *ctx, const uint8_t *data, size_t len)');
    const final = lib.func('int EVP_MAC_final(void *ctx, uint8_t *out, _Out_ size_t *outl, size_t outsize)');
    const mac: unknown = fetch(null, 'POLY1305', null);
    const ctx: unknown = mac ? newCtx(mac) : null;
    if (!ctx) return null;
    const outLength = [0];
    return (msg, oneTimeKey) => {
      const tag = new Uint8Array(16);
      if (
        init(ctx, oneTimeKey, 32, null) !== 1 ||
        update(ctx, msg, msg.length) !== 1 ||
        final(ctx, tag, outLength, 16) !== 1 ||
        outLength[0] !== 16
      )
        throw new Error('OpenSSL could not compute a Poly1305 tag');
      return tag;
    };
  } catch {
    return null;
  }
}
