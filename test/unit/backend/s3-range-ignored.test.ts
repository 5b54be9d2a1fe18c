// A server that ignores Range answers a ranged GET with 200 and the whole object (HTTP allows it). The backend must
// still hand over exactly the range asked for, and judge a range past the end by the object's size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { S3Backend } from '../../../src/engine/backend/s3.ts';

const object = Buffer.from('0123456789abcdefghij');
const id = 'ab'.repeat(32);

test('a server that ignores Range: the range asked for is cut from the whole object, and one past its end fails', async () => {
  const ranges: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    ranges.push(req.headers.range);
    res.writeHead(200, { 'content-length': object.length }).end(object);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const backend = new S3Backend({
    endpoint: `http://127.0.0.1:${port}`,
    bucket: 'b',
    credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
  });
  try {
    const pack = { type: 'pack' as const, name: id };
    assert.equal(Buffer.from(await backend.load(pack, 2, 5)).toString(), '23456');
    assert.equal(Buffer.from(await backend.load(pack, 15, 0)).toString(), 'fghij');
    assert.equal(Buffer.from(await backend.load(pack)).toString(), object.toString());
    await assert.rejects(backend.load(pack, 18, 5), /is 20 bytes, too short for 5 bytes at offset 18/);
    assert.deepEqual(ranges.slice(0, 3), ['bytes=2-6', 'bytes=15-', undefined]);
  } finally {
    backend.close?.();
    server.close();
  }
});
