import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmallFileWriter } from '../../../src/engine/restore/small-file-writer.ts';
import { newNode } from '../../../src/engine/tree/node.ts';
import { utcTime } from '../../../src/engine/tree/gotime.ts';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { sealSmallBlobs } from '../../../src/engine/backup/small-seal.ts';
import { CorruptBlobError } from '../../../src/engine/repository/errors.ts';
import type { BlobLocation } from '../../../src/engine/index/table.ts';
import { randomBytes } from '../../support/repo.ts';
import { startThread } from '../../../src/engine/concurrency/thread.ts';
import {
  encodeBatch,
  type SmallFileReply,
  type ToSmallFileThread,
} from '../../../src/engine/restore/small-file-protocol.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-small-'));
const key = newMasterKey();
// the writer's paths are relative to the folder it is given, as a restore's are to its target
const root = openSync(work, constants.O_RDONLY | constants.O_DIRECTORY);
test.after(() => {
  closeSync(root);
  return rm(work, { recursive: true, force: true });
});

function newWriter(): SmallFileWriter {
  const writer = new SmallFileWriter(key);
  writer.start(root);
  return writer;
}

test('small files are written whole on their thread with mode and times, batched or not, and a hole at the end', async () => {
  const writer = newWriter();
  try {
    const mtime = utcTime(1_600_000_000_123_456_789n);
    const node = (mode: number) =>
      newNode(Buffer.from('f'), 'file', { mode, mtime, atime: mtime, uid: process.getuid!(), gid: process.getgid!() });
    // several in one turn travel as one batch; the last comes in a later turn
    await Promise.all(
      [0, 1, 2].map((i) => writer.write(Buffer.from(`f${i}`), Buffer.from(`data ${i}`), 6, node(0o640 + i))),
    );
    await writer.write(Buffer.from('tail'), Buffer.from('abc'), 4096, node(0o600));
    for (const i of [0, 1, 2]) {
      const path = join(work, `f${i}`);
      assert.equal((await readFile(path)).toString(), `data ${i}`);
      const st = await stat(path, { bigint: true });
      assert.equal(Number(st.mode & 0o777n), 0o640 + i);
      // futimens takes whole nanoseconds (atime moved: the file was just read)
      assert.equal(st.mtimeNs, mtime.ns);
    }
    const tail = await readFile(join(work, 'tail'));
    assert.equal(tail.length, 4096);
    assert.equal(tail.subarray(0, 3).toString(), 'abc');
  } finally {
    await writer.close();
  }
});

test('a file that cannot be created fails with its path, and the writer goes on', async () => {
  const writer = newWriter();
  try {
    const node = newNode(Buffer.from('f'), 'file', { mode: 0o644 });
    await assert.rejects(
      writer.write(Buffer.from('missing/x'), Buffer.from('x'), 1, node),
      /could not write .*missing\/x: ENOENT/,
    );
    await writer.write(Buffer.from('after'), Buffer.from('y'), 1, node);
    assert.equal((await readFile(join(work, 'after'))).toString(), 'y');
  } finally {
    await writer.close();
  }
});

test('closing refuses files not yet handed over, waits for those that were, and the thread stops', async () => {
  const writer = newWriter();
  const node = newNode(Buffer.from('f'), 'file', { mode: 0o644 });
  await writer.write(Buffer.from('first'), Buffer.from('1'), 1, node);
  // queued in this turn: close comes before the batch leaves
  const late = assert.rejects(
    writer.write(Buffer.from('late'), Buffer.from('2'), 1, node),
    /restore ended before this file was written/,
  );
  await writer.close();
  await late;
  await assert.rejects(stat(join(work, 'late')), { code: 'ENOENT' });
  await assert.rejects(writer.write(Buffer.from('after-close'), Buffer.from('3'), 1, node), /restore ended/);
});

test("a folder's owner, mode and times are set on the thread through the folder itself, and a missing folder fails naming it", async () => {
  const writer = newWriter();
  try {
    const dir = join(work, 'folder');
    await mkdir(dir);
    const mtime = utcTime(1_500_000_000_987_654_321n);
    await writer.writeMetadata(
      Buffer.from('folder'),
      newNode(Buffer.from('folder'), 'dir', {
        mode: 0o750 | 0x80000000,
        mtime,
        atime: mtime,
        uid: process.getuid!(),
        gid: process.getgid!(),
      }),
    );
    const st = await stat(dir, { bigint: true });
    assert.equal(Number(st.mode & 0o777n), 0o750);
    assert.equal(st.mtimeNs, mtime.ns);
    await assert.rejects(
      writer.writeMetadata(
        Buffer.from('no-such-folder'),
        newNode(Buffer.from('x'), 'dir', { mode: 0o755 | 0x80000000 }),
      ),
      /could not restore the metadata of .*no-such-folder: .*ENOENT/,
    );
  } finally {
    await writer.close();
  }
});

test('a sealed file is opened and checked on the thread; a damaged blob fails naming its pack and id, and makes no file', async () => {
  const writer = newWriter();
  try {
    const node = newNode(Buffer.from('f'), 'file', { mode: 0o644 });
    const text = Buffer.from('{"a": 1, "b": [1, 2, 3]}\n'.repeat(200));
    const random = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 2654435761) >>> 24));
    const sealedOf = (data: Buffer) => {
      const blob = prepareBlob(key, 'data', hashID(data), data, true);
      const loc: BlobLocation = {
        pack: 'ab'.repeat(32),
        type: 'data',
        id: blob.id,
        offset: 0,
        length: blob.sealed.length,
        uncompressedLength: blob.uncompressedLength,
      };
      return { sealed: Buffer.from(blob.sealed), loc };
    };
    const a = sealedOf(text);
    const b = sealedOf(random);
    assert.ok(a.loc.uncompressedLength > 0, 'the text is stored compressed');
    await Promise.all([
      writer.writeSealed(Buffer.from('sealed-text'), a.sealed, a.loc, text.length, node),
      writer.writeSealed(Buffer.from('sealed-random'), b.sealed, b.loc, random.length + 100, node),
    ]);
    assert.ok((await readFile(join(work, 'sealed-text'))).equals(text));
    const back = await readFile(join(work, 'sealed-random'));
    assert.ok(back.subarray(0, random.length).equals(random) && back.length === random.length + 100);

    const damaged = Buffer.from(a.sealed);
    damaged[20] ^= 1;
    const wrongId = { ...b.loc, id: hashID(Buffer.from('something else')) };
    const [mac, id] = await Promise.allSettled([
      writer.writeSealed(Buffer.from('damaged'), damaged, a.loc, text.length, node),
      writer.writeSealed(Buffer.from('wrong-id'), b.sealed, wrongId, random.length, node),
    ]);
    for (const [r, loc] of [
      [mac, a.loc],
      [id, wrongId],
    ] as const) {
      assert.equal(r.status, 'rejected');
      const err = (r as PromiseRejectedResult).reason as Error;
      assert.ok(
        err instanceof CorruptBlobError && err.message.includes(loc.pack) && err.message.includes(loc.id),
        err.message,
      );
    }
    assert.match(((id as PromiseRejectedResult).reason as Error).message, /does not match its id/);
    await assert.rejects(stat(join(work, 'damaged')), { code: 'ENOENT' });
    await assert.rejects(stat(join(work, 'wrong-id')), { code: 'ENOENT' });
  } finally {
    await writer.close();
  }
});

test('small blobs a backup sealed as one batch restore together; a damaged one in the middle fails alone', async () => {
  const writer = newWriter();
  try {
    const node = newNode(Buffer.from('f'), 'file', { mode: 0o644 });
    // text (stored compressed), random bytes (stored raw) and an empty file, sealed as the backup seals a batch
    const plains = Array.from({ length: 12 }, (_, i) => {
      const data =
        i % 3 === 0
          ? Buffer.from(`{"n": ${i}}\n`.repeat(50 + i))
          : i % 3 === 1
            ? Buffer.from(Array.from({ length: 900 + i }, (_, j) => ((j + 1) * (i + 7) * 2654435761) >>> 24))
            : Buffer.alloc(0);
      return { id: hashID(data), data };
    });
    const { sealed, blobs } = sealSmallBlobs(key, true, plains);
    let at = 0;
    const files = blobs.map((b, i) => {
      const bytes = Buffer.from(sealed.subarray(at, at + b.sealedLength));
      at += b.sealedLength;
      if (i === 5) bytes[bytes.length - 3] ^= 1;
      const loc: BlobLocation = {
        pack: 'cd'.repeat(32),
        type: 'data',
        id: b.id,
        offset: 0,
        length: b.sealedLength,
        uncompressedLength: b.uncompressedLength,
      };
      return writer.writeSealed(Buffer.from(`run-${i}`), bytes, loc, plains[i].data.length, node);
    });
    const settled = await Promise.allSettled(files);
    for (const [i, r] of settled.entries()) {
      if (i === 5) {
        assert.ok(r.status === 'rejected' && r.reason instanceof CorruptBlobError, 'the damaged blob is refused');
        await assert.rejects(stat(join(work, `run-${i}`)), { code: 'ENOENT' });
        continue;
      }
      assert.equal(r.status, 'fulfilled', `file ${i}`);
      assert.ok((await readFile(join(work, `run-${i}`))).equals(plains[i].data), `file ${i} content`);
    }
  } finally {
    await writer.close();
  }
});

test('the thread answers a batch in parts as it writes, so the first files settle before the last are written', async () => {
  const thread = startThread(new URL('../../../src/engine/restore/small-file-thread.ts', import.meta.url), {});
  try {
    // files 10 and 70 are in a folder that is not there
    const files = Array.from({ length: 100 }, (_, i) => {
      const path = i === 10 || i === 70 ? `gone/part-${i}` : `part-${i}`;
      return { path: Buffer.from(path), data: Buffer.from(`content ${i}`), size: 8 + String(i).length };
    });
    const replies: SmallFileReply[] = [];
    const answered = new Promise<void>((resolve, reject) => {
      thread.on('error', reject);
      thread.on('message', (reply: SmallFileReply) => {
        replies.push(reply);
        if (reply.done === files.length) resolve();
      });
    });
    thread.postMessage({ op: 'init', key } satisfies ToSmallFileThread);
    const bytes = encodeBatch(
      files.map((f) => ({
        kind: 'file',
        path: f.path,
        data: f.data,
        size: f.size,
        uid: 0,
        gid: 0,
        mode: 0o644,
        times: Buffer.alloc(32),
      })),
    );
    thread.postMessage({ op: 'batch', id: 7, root, bytes } satisfies ToSmallFileThread, [bytes.buffer]);
    await answered;
    assert.ok(replies.length > 1, `one batch of 100 files got ${replies.length} answer(s)`);
    let before = 0;
    for (const r of replies) {
      assert.equal(r.id, 7);
      assert.ok(r.done > before, 'each part answers files after the last part');
      for (const [i] of r.failures) assert.ok(i >= before && i < r.done, `failure ${i} is answered in its own part`);
      before = r.done;
    }
    const failed = replies.flatMap((r) => r.failures);
    assert.deepEqual(
      failed.map(([i, why]) => [i, /ENOENT/.test(why.content ?? '')]),
      [
        [10, true],
        [70, true],
      ],
    );
    assert.equal((await readFile(join(work, 'part-99'))).toString(), 'content 99');
  } finally {
    await thread.terminate();
  }
});

test('answered in parts, each file of a batch settles as itself: the ones that failed name their paths, the rest are written', async () => {
  const writer = newWriter();
  try {
    const node = newNode(Buffer.from('f'), 'file', { mode: 0o644 });
    const results = await Promise.allSettled(
      Array.from({ length: 150 }, (_, i) =>
        writer.write(
          Buffer.from(i % 40 === 39 ? `nowhere/many-${i}` : `many-${i}`),
          Buffer.from(`m${i}`),
          1 + String(i).length,
          node,
        ),
      ),
    );
    results.forEach((r, i) => {
      if (i % 40 === 39) {
        assert.equal(r.status, 'rejected', `file ${i}`);
        assert.match(((r as PromiseRejectedResult).reason as Error).message, new RegExp(`nowhere/many-${i}: ENOENT`));
      } else assert.equal(r.status, 'fulfilled', `file ${i}`);
    });
    assert.equal((await readFile(join(work, 'many-149'))).toString(), 'm149');
  } finally {
    await writer.close();
  }
});

test('a read opened on the thread comes back whole: small compressed and raw blobs as buffers of their own, the rest views of the read', async () => {
  const writer = newWriter();
  try {
    const text = (n: number) => Buffer.from('{"key": "value", "n": [1, 2, 3]}\n'.repeat(Math.ceil(n / 34)).slice(0, n));
    // a compressed blob this small comes out of zstd in Node's shared pool of small buffers, which cannot be moved
    const plains = [
      text(3000),
      Buffer.from(randomBytes(1000, 3)),
      Buffer.from(randomBytes(3 << 20, 4)),
      text(200_000),
      Buffer.from(randomBytes(6 << 20, 5)),
    ];
    const sealed = plains.map((p) => prepareBlob(key, 'data', hashID(p), p, true));
    const bytes = new Uint8Array(sealed.reduce((n, b) => n + b.sealed.length, 0));
    let at = 0;
    const blobs = sealed.map((b) => {
      bytes.set(b.sealed, at);
      const blob = { id: b.id, offset: at, length: b.sealed.length, uncompressedLength: b.uncompressedLength };
      at += b.sealed.length;
      return blob;
    });
    assert.ok(blobs[0].uncompressedLength > 0 && blobs[1].uncompressedLength === 0);
    // twice: the second time the thread's OpenSSL is bound, and raw blobs are decrypted over the read
    for (const round of [1, 2]) {
      const results = await writer.openRead(new Uint8Array(bytes), blobs);
      results.forEach((r, i) => {
        assert.ok(r instanceof Uint8Array, `round ${round}, blob ${i}: ${String(r)}`);
        assert.ok(Buffer.from(r).equals(plains[i]), `round ${round}, blob ${i}`);
      });
      const views = (results as Uint8Array[]).filter((r) => r.byteLength < r.buffer.byteLength);
      assert.ok(
        views.every((v) => v.buffer === views[0].buffer),
        'every plaintext shorter than its buffer is a view of the one read',
      );
      if (round === 2) assert.ok(views.length >= 2, 'raw blobs decrypted in place');
    }
    assert.ok(writer.takesReads, 'takes reads again once they are answered');
    // one read being opened and one waiting behind it, no more: the restore's own thread opens the rest
    const first = writer.openRead(new Uint8Array(bytes), blobs);
    assert.ok(writer.takesReads, 'a second read may wait behind the first');
    const second = writer.openRead(new Uint8Array(bytes), blobs);
    assert.equal(writer.takesReads, false, 'a third may not');
    await Promise.all([first, second]);
    assert.ok(writer.takesReads);
    // small files come first: a thread with files to write takes no read
    const file = writer.write(Buffer.from('while-reading'), Buffer.from('w'), 1, newNode(Buffer.from('f'), 'file', {}));
    assert.equal(writer.takesReads, false, 'no read while a small file waits');
    await file;
    assert.ok(writer.takesReads);
  } finally {
    await writer.close();
  }
  assert.equal(writer.takesReads, false, 'a closed writer takes no reads');
});
