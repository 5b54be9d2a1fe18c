// restic before linktarget_raw (0.14 to 0.16) wrote each invalid UTF-8 byte of a symlink target as the
// escape \ufffd: the target is lost, and a tree read back keeps U+FFFD, which Go (and ferry) then write
// as raw UTF-8. Re-encoding such a tree is therefore compared with what Go itself would write.
import { goJsonStringFromBytes } from '../../../../src/engine/tree/gojson.ts';
import { utf8Bytes } from '../../../../src/engine/tree/goutf8.ts';

export function writesRawLinkTargets(trees: Iterable<Uint8Array>): boolean {
  return [...trees].some((blob) => Buffer.from(blob).includes('"linktarget_raw":'));
}

/** What Go writes after reading `blob`: each \ufffd escape (not itself escaped) becomes the raw character. */
export function goReencoded(blob: Uint8Array): Uint8Array {
  return utf8Bytes(
    Buffer.from(blob)
      .toString('utf8')
      .replace(/(?<!\\)((?:\\\\)*)\\ufffd/g, '$1\ufffd'),
  );
}

/** A target as that restic kept it: every invalid byte replaced by U+FFFD. */
export function lossyTarget(target: Uint8Array): Uint8Array {
  return utf8Bytes(JSON.parse(goJsonStringFromBytes(target)) as string);
}
