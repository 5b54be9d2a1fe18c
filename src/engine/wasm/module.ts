// Compiling and instantiating the embedded WebAssembly kernels (chunker, Poly1305). The project's TypeScript libs
// (es2024 + node) do not describe WebAssembly, so the little used here is typed here, once.

/** a compiled module, opaque to us */
export type WasmModule = object;

interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule) => { exports: unknown };
}

const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export function compileBase64(base64: string): WasmModule {
  return new wasm.Module(Buffer.from(base64, 'base64'));
}

/** A fresh instance (its own memory) of a compiled module; `T` describes its exports. */
export function instantiate<T>(module: WasmModule): T {
  return new wasm.Instance(module).exports as T;
}
