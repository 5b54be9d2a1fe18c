// Parsing of --repo strings (restic's syntax) into backends.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPermanent } from '../../../src/engine/backend/backend.ts';
import { openBackend, parseS3Location } from '../../../src/engine/backend/open.ts';
import { RetryBackend } from '../../../src/engine/backend/retry.ts';
import { FsBackend } from '../../../src/engine/backend/fs.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };

describe('openBackend', () => {
  const s3Cases: [string, { endpoint: string; bucket: string; prefix: string }][] = [
    ['s3:http://127.0.0.1:9000/bucket', { endpoint: 'http://127.0.0.1:9000', bucket: 'bucket', prefix: '' }],
    [
      's3:https://minio.example:9443/bucket/a/b/',
      { endpoint: 'https://minio.example:9443', bucket: 'bucket', prefix: 'a/b' },
    ],
    ['s3:s3.amazonaws.com/bucket/prefix', { endpoint: 'https://s3.amazonaws.com', bucket: 'bucket', prefix: 'prefix' }],
    ['s3://s3.eu-west-1.amazonaws.com/b', { endpoint: 'https://s3.eu-west-1.amazonaws.com', bucket: 'b', prefix: '' }],
  ];
  for (const [location, expected] of s3Cases) {
    it(`parses ${location}`, () => {
      assert.deepEqual(parseS3Location(location), expected);
    });
  }

  it('opens S3 locations wrapped in retries, with a location free of credentials', async () => {
    const b = openBackend('s3:http://127.0.0.1:9000/bucket/repo', { s3: { credentials } });
    // the S3 implementation may sit behind further wrappers (lazy loading); only the retry layer is promised
    assert.ok(b instanceof RetryBackend);
    assert.ok(!(b.inner instanceof FsBackend));
    assert.equal(b.location, 's3:http://127.0.0.1:9000/bucket/repo');
    assert.doesNotMatch(JSON.stringify(b.location), /AKID|wJalr/);
    await b.close();
  });

  it('opens filesystem paths, with or without local:', () => {
    for (const location of ['/srv/repo', 'local:/srv/repo']) {
      const b = openBackend(location);
      assert.ok(b instanceof RetryBackend && b.inner instanceof FsBackend);
      assert.equal(b.location, '/srv/repo');
    }
  });

  for (const [location, message] of [
    ['s3:http://127.0.0.1:9000', /names no bucket/],
    ['s3:http://127.0.0.1:9000/', /names no bucket/],
    ['s3:http://user:secret@host/bucket', /must not contain credentials/],
    ['', /empty/],
  ] as const) {
    it(`rejects "${location}" with a clear permanent error`, () => {
      assert.throws(
        () => openBackend(location),
        (err: Error) => {
          assert.ok(isPermanent(err));
          assert.match(err.message, message);
          assert.doesNotMatch(err.message, /secret/);
          return true;
        },
      );
    });
  }
});
