// A pull reader for JSON documents, so decoders read fields straight into their own types and can:
// keep 64-bit integers exact (JSON.parse rounds them to doubles), keep a value's source text
// (generic_attributes are stored raw), and skip unknown fields as Go's decoder does.
// Strings follow Go's decoder: an escaped lone surrogate becomes U+FFFD.

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const maxUint64 = (1n << 64n) - 1n;

const simpleEscapes = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

export class JsonReader {
  private readonly text: string;
  private readonly what: string;
  private pos = 0;

  /** `what` names the document in error messages ("tree blob", "snapshot"). */
  constructor(text: string, what: string) {
    this.text = text;
    this.what = what;
  }

  private fail(expected: string): never {
    const found = this.pos < this.text.length ? JSON.stringify(this.text.slice(this.pos, this.pos + 12)) : 'the end';
    throw new Error(`${this.what} is not valid JSON: expected ${expected} at offset ${this.pos}, found ${found}`);
  }

  private skipSpace(): void {
    const t = this.text;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      p++;
    }
    this.pos = p;
  }

  private expect(ch: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== ch) this.fail(`"${ch}"`);
    this.pos++;
  }

  /** Consumes a null and returns true, or returns false leaving the next value in place. */
  readNull(): boolean {
    this.skipSpace();
    if (!this.text.startsWith('null', this.pos)) return false;
    this.pos += 4;
    return true;
  }

  readBoolean(): boolean {
    this.skipSpace();
    if (this.text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (this.text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    return this.fail('a boolean');
  }

  readString(): string {
    this.skipSpace();
    if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('a string');
    const start = this.pos + 1;
    const end = this.text.indexOf('"', start);
    if (end < 0) this.fail('the end of a string');
    const simple = this.text.slice(start, end);
    if (!/[\\\u0000-\u001f]/.test(simple)) {
      this.pos = end + 1;
      return simple;
    }
    return this.readEscapedString(start);
  }

  private readEscapedString(start: number): string {
    const t = this.text;
    let out = '';
    let p = start;
    let plainFrom = start;
    for (;;) {
      const c = t.charCodeAt(p);
      if (Number.isNaN(c)) return this.fail('the end of a string');
      if (c < 0x20) {
        this.pos = p;
        return this.fail('no raw control character in a string');
      }
      if (c === 0x22) break;
      if (c !== 0x5c) {
        p++;
        continue;
      }
      out += t.slice(plainFrom, p);
      const [decoded, next] = this.unescape(p + 1);
      out += decoded;
      p = next;
      plainFrom = p;
    }
    this.pos = p + 1;
    return out + t.slice(plainFrom, p);
  }

  private unescape(p: number): [string, number] {
    const letter = this.text[p];
    const simple = simpleEscapes.get(letter);
    if (simple !== undefined) return [simple, p + 1];
    if (letter !== 'u') {
      this.pos = p;
      return this.fail('a valid escape');
    }
    const unit = this.hex4(p + 1);
    if (unit < 0xd800 || unit > 0xdfff) return [String.fromCharCode(unit), p + 5];
    const low = this.text.startsWith('\\u', p + 5) ? this.hex4(p + 7) : -1;
    if (unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) return [String.fromCharCode(unit, low), p + 11];
    return ['\ufffd', p + 5];
  }

  private hex4(p: number): number {
    const digits = this.text.slice(p, p + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) {
      this.pos = p;
      return this.fail('four hex digits');
    }
    return parseInt(digits, 16);
  }

  /** The source text of a number. */
  readNumberText(): string {
    this.skipSpace();
    const start = this.pos;
    let p = start;
    // plain digits are by far the most common: scan them by hand, leave the full grammar to the pattern
    while (p < this.text.length && this.text.charCodeAt(p) >= 0x30 && this.text.charCodeAt(p) <= 0x39) p++;
    const next = this.text.charCodeAt(p);
    if (p > start && next !== 0x2e && next !== 0x65 && next !== 0x45 && (this.text[start] !== '0' || p === start + 1)) {
      this.pos = p;
      return this.text.slice(start, p);
    }
    numberPattern.lastIndex = start;
    const m = numberPattern.exec(this.text);
    if (m === null) return this.fail('a number');
    this.pos += m[0].length;
    return m[0];
  }

  private notUnsigned(text: string, field: string, bits: number): never {
    throw new Error(`${this.what} field "${field}" holds ${text}, which is not a ${bits}-bit unsigned integer`);
  }

  /** An unsigned integer as Go decodes into a uint32. */
  readUint32(field: string): number {
    const text = this.readNumberText();
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > 0xffffffff) this.notUnsigned(text, field, 32);
    return n;
  }

  /** An unsigned integer as Go decodes into a uint64, exact beyond 2^53. */
  readUint64(field: string): bigint {
    const text = this.readNumberText();
    if (!/^\d+$/.test(text)) this.notUnsigned(text, field, 64);
    // up to 15 digits a double is exact, and converting it is cheaper than parsing a BigInt
    const n = text.length <= 15 ? BigInt(Number(text)) : BigInt(text);
    if (n > maxUint64) this.notUnsigned(text, field, 64);
    return n;
  }

  /** A signed or unsigned integer small enough for a JS number. */
  readSafeInteger(field: string): number {
    const text = this.readNumberText();
    const n = Number(text);
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n))
      throw new Error(`${this.what} field "${field}" holds ${text}, which is not an integer`);
    return n;
  }

  /** Calls onKey for each member; onKey must consume the member's value. */
  readObject(onKey: (key: string) => void): void {
    this.expect('{');
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      const key = this.readString();
      this.expect(':');
      onKey(key);
      this.skipSpace();
      const c = this.text[this.pos++];
      if (c === '}') return;
      if (c !== ',') {
        this.pos--;
        this.fail('"," or "}"');
      }
    }
  }

  /** Calls onItem for each element; onItem must consume the element. */
  readArray(onItem: () => void): void {
    this.expect('[');
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return;
    }
    for (;;) {
      onItem();
      this.skipSpace();
      const c = this.text[this.pos++];
      if (c === ']') return;
      if (c !== ',') {
        this.pos--;
        this.fail('"," or "]"');
      }
    }
  }

  readStringArray(): string[] {
    const items: string[] = [];
    this.readArray(() => items.push(this.readString()));
    return items;
  }

  /** Consumes any value, checking its syntax. */
  skip(): void {
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '{') this.readObject(() => this.skip());
    else if (c === '[') this.readArray(() => this.skip());
    else if (c === '"') this.readString();
    else if (c === 't' || c === 'f') this.readBoolean();
    else if (!this.readNull()) this.readNumberText();
  }

  /** Consumes any value and returns its source text. */
  readRaw(): string {
    this.skipSpace();
    const start = this.pos;
    this.skip();
    return this.text.slice(start, this.pos);
  }

  /** Checks that only whitespace follows. */
  end(): void {
    this.skipSpace();
    if (this.pos !== this.text.length) this.fail('the end of the document');
  }
}
