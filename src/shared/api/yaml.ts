// Block-style YAML for generated manifests (JSON-like data only: objects, arrays, strings, numbers, booleans, null).
// Written here because the client library's YAML writer maps objects through its typed models, which drop
// CRD schema keys such as `default` and `x-kubernetes-list-type`. Strings that could read as anything else are
// written double-quoted with JSON escapes, which YAML reads the same way.

type Data = null | boolean | number | string | Data[] | { [key: string]: Data };

const plainKey = /^[A-Za-z_][A-Za-z0-9_.\/-]*$/;
// starts with a letter, no ': ' or ' #', no trailing space, only characters with no meaning in a plain scalar
const plainString = /^[A-Za-z][A-Za-z0-9 _.,;()\/'%<>=+*-]*$/;
const reserved = /^(true|false|yes|no|on|off|y|n|null|nan|inf)$/i;

function scalar(value: null | boolean | number | string): string {
  if (typeof value !== 'string') return String(value);
  const plain = plainString.test(value) && !value.endsWith(' ') && !value.includes(' #') && !reserved.test(value);
  return plain ? value : JSON.stringify(value);
}

function key(name: string): string {
  return plainKey.test(name) && !reserved.test(name) ? name : JSON.stringify(name);
}

function isEmpty(value: Data): boolean {
  return (
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === 'object' && value !== null && Object.keys(value).length === 0)
  );
}

function inline(value: Data): string {
  if (Array.isArray(value)) return '[]';
  if (typeof value === 'object' && value !== null) return '{}';
  return scalar(value);
}

function isBlock(value: Data): value is Data[] | { [key: string]: Data } {
  return typeof value === 'object' && value !== null && !isEmpty(value);
}

function lines(value: Data, indent: string): string[] {
  const out: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!isBlock(item)) {
        out.push(`${indent}- ${inline(item)}`);
        continue;
      }
      // the item's first line follows the dash; the rest line up under it
      const inner = lines(item, `${indent}  `);
      out.push(`${indent}- ${inner[0].slice(indent.length + 2)}`, ...inner.slice(1));
    }
    return out;
  }
  for (const [name, child] of Object.entries(value as Record<string, Data>)) {
    if (child === undefined) continue;
    if (isBlock(child)) out.push(`${indent}${key(name)}:`, ...lines(child, `${indent}  `));
    else out.push(`${indent}${key(name)}: ${inline(child)}`);
  }
  return out;
}

/** One YAML document for an object. */
export function toYaml(document: Record<string, unknown>): string {
  return `${lines(document as Data, '').join('\n')}\n`;
}
