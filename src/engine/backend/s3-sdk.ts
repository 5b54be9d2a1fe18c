// The backend's S3 requests through the AWS SDK: for credentials only its provider chain can find (web identity,
// instance roles), and for multipart uploads, whose client this also lends.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from './s3-client.ts';
import type { S3ClientOptions } from './s3-settings.ts';
import type { S3Listing, S3Requests } from './s3-signed.ts';
import { wholeAnswer } from './s3-range.ts';

export class SdkRequests implements S3Requests {
  readonly client: S3Client;
  readonly #bucket: string;

  constructor(opts: S3ClientOptions, bucket: string) {
    this.client = createS3Client(opts);
    this.#bucket = bucket;
  }

  async get(
    key: string,
    range: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ bytes: Uint8Array; contentRange?: string }> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key, Range: range }), {
      abortSignal: signal,
    });
    const bytes = (await res.Body?.transformToByteArray()) ?? new Uint8Array();
    if (range && res.$metadata.httpStatusCode === 200) return wholeAnswer(range, bytes);
    return { bytes, contentRange: res.ContentRange };
  }

  async put(key: string, body: Uint8Array, signal?: AbortSignal): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ContentLength: body.length }),
      { abortSignal: signal },
    );
  }

  async head(key: string): Promise<{ size: number }> {
    const res = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
    return { size: res.ContentLength ?? 0 };
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
  }

  async headBucket(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
  }

  async list(prefix: string, token: string | undefined, signal?: AbortSignal): Promise<S3Listing> {
    const page = await this.client.send(
      new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }),
      { abortSignal: signal },
    );
    return {
      objects: (page.Contents ?? []).map((o) => ({ key: o.Key ?? '', size: o.Size ?? 0 })),
      next: page.IsTruncated ? page.NextContinuationToken : undefined,
    };
  }

  close(): void {
    this.client.destroy();
  }
}
