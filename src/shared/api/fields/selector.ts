// Kubernetes' label selector, described once for every field that picks objects by label: a schedule's and an
// AppBackup's PVCs, a hook's pods.
import { arr, map, obj, str } from '../field.ts';
import type { ObjectField, Pattern } from '../field.ts';

const labelValue: Pattern = {
  regex: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
  allowed: "a label value (up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
};

const labelKey = str('Label key.', {
  maxLength: 316,
  pattern: {
    regex:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    allowed: 'a label key such as app or example.com/tier',
  },
});

/** A label selector; `description` says what it selects, `what` names those objects in its parts' descriptions. */
export function labelSelector(description: string, what: string): ObjectField {
  return obj(description, {
    matchLabels: map(
      `Labels a ${what} must have, with these values.`,
      str('Label value.', { pattern: labelValue, maxLength: 63 }),
      { maxProperties: 64 },
    ),
    matchExpressions: arr(
      'Requirements on labels; all must hold.',
      obj(
        'One requirement on a label.',
        {
          key: labelKey,
          operator: str('How the label relates to values.', { enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }),
          values: arr(
            'Values for In and NotIn; empty for Exists and DoesNotExist.',
            str('Label value.', { pattern: labelValue, maxLength: 63 }),
            { maxItems: 64 },
          ),
        },
        { required: ['key', 'operator'] },
      ),
      { maxItems: 32 },
    ),
  });
}
