// Where ferry's CPU time goes, from V8 .cpuprofile files (one per thread): each sample's self time is charged to
// the nearest frame, from the sampled one up its callers, that a rule below recognises. Native work (a hash update,
// a zstd call, a WebAssembly kernel) has no useful frame of its own, so it lands on the JS that called it.

export interface CallFrame {
  functionName: string;
  url: string;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface Rule {
  category: string;
  url?: string;
  fn?: RegExp;
}

// first match wins for a frame; frames are tried from the sampled one upwards
const rules: Rule[] = [
  { category: 'idle', fn: /^\(idle\)$/ },
  { category: 'garbage collection', fn: /^\(garbage collector\)$/ },
  { category: 'SHA-256', fn: /^chunkID$/ },
  { category: 'SHA-256', url: 'internal/crypto/hash' },
  { category: 'SHA-256', url: 'shared/ids/' },
  { category: 'chunking (Rabin)', url: 'shared/chunker/' },
  { category: 'compression (zstd)', url: 'shared/compress/' },
  // blob compression and the guess that skips it live beside the pack code, but are compression's cost
  { category: 'compression (zstd)', url: 'shared/pack/blob-zstd' },
  { category: 'compression (zstd)', url: 'shared/pack/incompressible' },
  { category: 'compression (zstd)', url: 'zlib' },
  { category: 'encryption + MAC', url: 'shared/crypto/' },
  { category: 'encryption + MAC', url: 'internal/crypto/cipher' },
  { category: 'thread messaging', url: 'internal/worker' },
  { category: 'thread messaging', url: 'worker_threads' },
  { category: 'thread messaging', url: 'shared/backup/transfer' },
  { category: 'S3 client + HTTP', url: '@aws-sdk' },
  { category: 'S3 client + HTTP', url: '@smithy' },
  { category: 'S3 client + HTTP', url: 'node:_http' },
  { category: 'S3 client + HTTP', url: 'node:http' },
  { category: 'S3 client + HTTP', url: 'node:net' },
  { category: 'file I/O', url: 'internal/fs' },
  { category: 'file I/O', url: 'node:fs' },
  { category: 'read loop (file-chunks.ts: buffers, zero detection)', url: 'shared/backup/file-chunks' },
  { category: 'write loop (file-writer.ts: buffers, holes)', url: 'shared/restore/file-writer' },
  { category: 'storage backend', url: 'shared/backend/' },
  { category: 'packs + index', url: 'shared/pack/' },
  { category: 'packs + index', url: 'shared/index/' },
  { category: 'packs + index', url: 'shared/repository/' },
  { category: 'trees + metadata', url: 'shared/tree/' },
  { category: 'trees + metadata', url: 'shared/fsmeta/' },
  { category: 'trees + metadata', url: 'shared/snapshot/' },
  { category: 'backup / restore logic', url: 'shared/backup/' },
  { category: 'backup / restore logic', url: 'shared/restore/' },
  { category: 'start-up (module loading, CLI)', url: 'internal/modules' },
  { category: 'start-up (module loading, CLI)', url: 'src/cli/' },
  { category: 'start-up (module loading, CLI)', url: 'node_modules/' },
];

function ruleFor(frame: CallFrame): string | undefined {
  for (const r of rules) {
    if (r.url !== undefined && !frame.url.includes(r.url)) continue;
    if (r.fn !== undefined && !r.fn.test(frame.functionName)) continue;
    return r.category;
  }
  return undefined;
}

/** Milliseconds of self time per category for one profile. */
export function categorize(profile: CpuProfile): Map<string, number> {
  const byID = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const cache = new Map<number, string>();
  const categoryOf = (id: number): string => {
    const known = cache.get(id);
    if (known) return known;
    let cat: string | undefined;
    for (let at: number | undefined = id; at !== undefined && cat === undefined; at = parent.get(at))
      cat = ruleFor(byID.get(at)!.callFrame);
    const frame = byID.get(id)!.callFrame;
    const result = cat ?? (frame.functionName === '(program)' ? 'native, unattributed' : 'other JS');
    cache.set(id, result);
    return result;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const cat = categoryOf(id);
    totals.set(cat, (totals.get(cat) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return totals;
}
