// The response side of HTTP/1.1 for http-get.ts: a head parsed within a bound, and a body framed by its length, by
// chunks, or by the connection's end (RFC 9112, sections 2-7). Whatever does not follow the grammar is an error
// naming what was wrong; nothing is repaired or guessed.
/** A connection failed or answered what HTTP does not allow; `code` says which, for the retry wrapper's logs. */
export class HttpGetError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'HttpGetError';
    this.code = code;
  }
}

/** The longest head taken: status line and headers. S3's are under 2 KiB. */
export const headLimit = 64 << 10;
/** The longest chunk-size or trailer line taken. */
const lineLimit = 4 << 10;
/** What a body may reach when the caller set no bound. */
const bodyLimit = 2 ** 32;

export interface Head {
  status: number;
  /** 1.0 or 1.1 */
  minor: number;
  headers: Record<string, string>;
}

const statusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\0]*)?$/;
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const protocolError = (what: string): HttpGetError =>
  new HttpGetError(`the server's response is not HTTP/1.1: ${what}`, 'EPROTO');

/**
 * The head at the start of `bytes` and where it ends, or undefined while it is not all there; its end is searched
 * for from `from` on (a head read a byte at a time is not searched from the start each time).
 */
export function parseHead(bytes: Uint8Array, from = 0): { head: Head; end: number } | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = b.indexOf('\r\n\r\n', from);
  if (at < 0) {
    if (b.length >= headLimit) throw protocolError(`its head is longer than ${headLimit} bytes`);
    return undefined;
  }
  const lines = b.toString('latin1', 0, at).split('\r\n');
  const first = statusLine.exec(lines[0]);
  if (!first) throw protocolError(`status line ${JSON.stringify(lines[0].slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    // a line starting with whitespace would continue the last one (obsolete folding), which RFC 9112 lets a client
    // refuse; a control character in a value could smuggle a line
    if (colon <= 0 || !token.test(name)) throw protocolError(`header line ${JSON.stringify(line.slice(0, 80))}`);
    const value = line.slice(colon + 1).trim();
    if (/[\0-\x08\x0a-\x1f\x7f]/.test(value)) throw protocolError(`a control character in header ${name}`);
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { head: { status: Number(first[2]), minor: Number(first[1]), headers }, end: at + 4 };
}

type Framing = { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'close' };

function framing(head: Head, max: number): Framing {
  const { status, headers } = head;
  if (status === 204 || status === 304) return { kind: 'length', length: 0 };
  const coding = headers['transfer-encoding'];
  // framed both ways, a response reads differently to whoever takes the other way (RFC 9112, 6.3)
  if (coding !== undefined && headers['content-length'] !== undefined)
    throw protocolError('both transfer-encoding and content-length');
  if (coding !== undefined) {
    if (coding.toLowerCase() !== 'chunked') throw protocolError(`transfer coding "${coding}"`);
    return { kind: 'chunked' };
  }
  const announced = headers['content-length'];
  if (announced === undefined) return { kind: 'close' };
  // the same length sent twice is one length; two different ones are a response that can be read two ways
  const lengths = new Set(announced.split(',').map((v) => v.trim()));
  const [value] = lengths;
  if (lengths.size !== 1 || !/^\d{1,16}$/.test(value)) throw protocolError(`content-length "${announced}"`);
  const length = Number(value);
  if (length > max) throw tooLong(length, max);
  return { kind: 'length', length };
}

const tooLong = (length: number, max: number): HttpGetError =>
  new HttpGetError(`the server's response body of ${length} bytes is longer than the ${max} asked for`, 'EPROTO');

/** A response's body as it arrives: read into straight when its length is known, gathered otherwise. */
export class BodyReader {
  readonly #max: number;
  readonly #framing: Framing;
  readonly #reusable: boolean;
  /** the body when its length is known */
  #into: Buffer | undefined;
  #at = 0;
  /** where a chunked or closing body is read, then copied from */
  #scratch: Buffer | undefined;
  #pieces: Buffer[] = [];
  #gathered = 0;
  #chunk: { state: 'size' | 'data' | 'crlf' | 'trailer' | 'done'; line: number[]; left: number } = {
    state: 'size',
    line: [],
    left: 0,
  };

  constructor(head: Head, max = bodyLimit) {
    this.#max = max;
    this.#framing = framing(head, max);
    const close = /(^|,)\s*close\s*(,|$)/i.test(head.headers.connection ?? '');
    this.#reusable = this.#framing.kind !== 'close' && head.minor === 1 && !close;
    if (this.#framing.kind === 'length') this.#into = Buffer.allocUnsafeSlow(this.#framing.length);
  }

  /** Whether the connection may carry another GET once this body ended. */
  get reusable(): boolean {
    return this.#reusable;
  }

  /** Whether the body ends with the connection (no length, no chunks). */
  get endsAtClose(): boolean {
    return this.#framing.kind === 'close';
  }

  /** Where the next read goes. */
  into(): Uint8Array {
    if (this.#into) return this.#into.subarray(this.#at);
    this.#scratch ??= Buffer.allocUnsafe(64 << 10);
    return this.#scratch;
  }

  /** `n` bytes were read into into(); true once the body is complete. */
  add(n: number): boolean {
    if (this.#into) {
      this.#at += n;
      return this.#at === this.#into.length;
    }
    return this.#gather(this.#scratch!.subarray(0, n));
  }

  /** Bytes of the body read elsewhere (after the head); true once the body is complete. */
  take(bytes: Uint8Array): boolean {
    if (this.#into) {
      if (bytes.length > this.#into.length - this.#at)
        throw protocolError('more bytes than its content-length, or a response nobody asked for');
      this.#into.set(bytes, this.#at);
      this.#at += bytes.length;
      return this.#at === this.#into.length;
    }
    return this.#gather(bytes);
  }

  bytes(): Buffer {
    if (this.#into) return this.#into;
    return this.#pieces.length === 1 ? this.#pieces[0] : Buffer.concat(this.#pieces);
  }

  #keep(bytes: Uint8Array): void {
    this.#gathered += bytes.length;
    if (this.#gathered > this.#max) throw tooLong(this.#gathered, this.#max);
    this.#pieces.push(Buffer.from(bytes));
  }

  #gather(bytes: Uint8Array): boolean {
    if (this.#framing.kind === 'close') {
      this.#keep(bytes);
      return false;
    }
    const c = this.#chunk;
    let i = 0;
    while (i < bytes.length) {
      switch (c.state) {
        case 'data': {
          const n = Math.min(c.left, bytes.length - i);
          this.#keep(bytes.subarray(i, i + n));
          i += n;
          c.left -= n;
          if (c.left === 0) c.state = 'crlf';
          break;
        }
        case 'crlf':
        case 'size':
        case 'trailer': {
          const byte = bytes[i++];
          c.line.push(byte);
          if (c.line.length > lineLimit) throw protocolError(`a chunk line longer than ${lineLimit} bytes`);
          if (byte !== 0x0a) break;
          this.#line(Buffer.from(c.line).toString('latin1'));
          c.line = [];
          break;
        }
        case 'done':
          throw protocolError('bytes after the last chunk');
      }
    }
    return c.state === 'done';
  }

  /** A whole line of the chunked framing, with its CRLF. */
  #line(line: string): void {
    const c = this.#chunk;
    if (!line.endsWith('\r\n')) throw protocolError('a chunk line ending in a bare LF');
    const text = line.slice(0, -2);
    if (c.state === 'crlf') {
      if (text !== '') throw protocolError('chunk data longer than its size');
      c.state = 'size';
    } else if (c.state === 'size') {
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(text);
      if (!size) throw protocolError(`chunk size line ${JSON.stringify(text.slice(0, 40))}`);
      c.left = parseInt(size[1], 16);
      if (this.#gathered + c.left > this.#max) throw tooLong(this.#gathered + c.left, this.#max);
      c.state = c.left === 0 ? 'trailer' : 'data';
    } else if (text === '') c.state = 'done';
  }
}
