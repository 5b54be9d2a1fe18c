// Signature Version 4 as S3 checks it: the example "GET Object" request of AWS's own documentation (signature v4,
// header-based authentication), whose published signature any correct signer reproduces. The requests themselves
// are exercised against MinIO by the backend contract (s3.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signV4 } from '../../../src/engine/backend/s3-signed.ts';
import { BodyCollector } from '../../../src/engine/net/body-collector.ts';

const credentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const emptyHash = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

test("signs AWS's published GET Object example exactly", () => {
  const auth = signV4(
    {
      method: 'GET',
      path: '/test.txt',
      query: '',
      payloadHash: emptyHash,
      headers: {
        Host: 'examplebucket.s3.amazonaws.com',
        Range: 'bytes=0-9',
        'x-amz-content-sha256': emptyHash,
        'x-amz-date': '20130524T000000Z',
      },
    },
    credentials,
    'us-east-1',
  );
  assert.equal(
    auth,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
      'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
});

test('any change to what is signed changes the signature', () => {
  const base = {
    method: 'GET',
    path: '/test.txt',
    query: '',
    payloadHash: emptyHash,
    headers: {
      host: 'examplebucket.s3.amazonaws.com',
      'x-amz-content-sha256': emptyHash,
      'x-amz-date': '20130524T000000Z',
    },
  };
  const signature = (r: typeof base, region = 'us-east-1') => signV4(r, credentials, region).split('Signature=')[1];
  const reference = signature(base);
  assert.notEqual(signature({ ...base, method: 'HEAD' }), reference);
  assert.notEqual(signature({ ...base, path: '/test.txu' }), reference);
  assert.notEqual(signature({ ...base, query: 'list-type=2' }), reference);
  assert.notEqual(signature(base, 'eu-central-1'), reference);
  assert.notEqual(signature({ ...base, headers: { ...base.headers, 'x-amz-date': '20130524T000001Z' } }), reference);
});

test('a response body is gathered whole, whatever its announced length says', () => {
  const data = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  const pieces = [data.subarray(0, 65_536), data.subarray(65_536, 200_000), data.subarray(200_000)];
  const gathered = (announced: string | undefined, parts: Buffer[]): Buffer => {
    const body = new BodyCollector(announced);
    for (const p of parts) body.add(p);
    return body.bytes();
  };
  // the announced length, exactly: one buffer of it, the pieces copied in (none of them kept)
  const exact = gathered(String(data.length), pieces);
  assert.deepEqual(exact, data);
  assert.notEqual(exact.buffer, data.buffer);
  // no length, a length in words, a small one: gathered as they come
  for (const announced of [undefined, 'many', '10']) assert.deepEqual(gathered(announced, pieces), data);
  // more than announced: nothing is lost, and the caller's range checks see the real length
  assert.deepEqual(gathered(String(data.length - 100_000), pieces), data);
  // less than announced (the connection ended early): only what came, never the buffer's unwritten tail
  assert.deepEqual(gathered(String(data.length + 5), pieces), data);
  assert.deepEqual(gathered(String(data.length), pieces.slice(0, 2)), data.subarray(0, 200_000));
  assert.deepEqual(gathered('0', []), Buffer.alloc(0));
});
