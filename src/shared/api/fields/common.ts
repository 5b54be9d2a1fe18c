// The pieces of ferry's API that several resources share: name and value patterns, conditions, phase, progress,
// step records, the status every DataUpload and DataDownload carries, and cron schedules.
import { arr, bool, int, map, num, obj, str } from '../field.ts';
import type { MapField, ObjectField, Pattern, StringField } from '../field.ts';

export const dnsLabel: Pattern = {
  regex: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  allowed: "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)",
};

const dnsSubdomain: Pattern = {
  regex: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  allowed:
    "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit)",
};

export const secretKey: Pattern = {
  regex: '^[-._a-zA-Z0-9]+$',
  allowed: "a Secret key (letters, digits, '-', '_' and '.')",
};

export const namespaceOrAll: Pattern = {
  regex: '^(\\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$',
  allowed: "a namespace name (a DNS-1123 label) or '*' for every namespace",
};

export const goDuration: Pattern = {
  regex: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$',
  allowed: "a duration such as '30s', '10m' or '1h30m' (units ms, s, m, h)",
};

export const quantity: Pattern = {
  regex: '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$',
  allowed: "a storage quantity such as '10Gi' or '500M'",
};

export const snapshotIDPattern: Pattern = {
  regex: '^[0-9a-f]{8,64}$',
  allowed: 'a repository snapshot ID (8 to 64 lowercase hexadecimal digits; a unique prefix is enough)',
};

export const fullID: Pattern = { regex: '^[0-9a-f]{64}$', allowed: 'a 64-digit lowercase hexadecimal ID' };

export function objectName(description: string): StringField {
  return str(description, { pattern: dnsSubdomain, maxLength: 253 });
}

export function namespaceName(description: string): StringField {
  return str(description, { pattern: dnsLabel, maxLength: 63 });
}

export const timestamp = (description: string): StringField => str(description, { format: 'date-time' });

// ---- pieces shared by several resources ----

const condition = obj(
  "One observation of the resource (Kubernetes' standard condition).",
  {
    type: str('Kind of condition, in CamelCase (e.g. Ready, Queued).', {
      maxLength: 316,
      pattern: {
        regex:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        allowed: 'a qualified name such as Ready or example.com/Ready',
      },
    }),
    status: str('Whether the condition holds.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str('Programmatic reason for the last transition, in CamelCase.', {
      minLength: 1,
      maxLength: 1024,
      pattern: {
        regex: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        allowed: 'a CamelCase word (letters, digits, _ , :)',
      },
    }),
    message: str('Human-readable details of the last transition.', { maxLength: 32768 }),
    lastTransitionTime: timestamp('When the status last changed.'),
    observedGeneration: int('The metadata.generation the condition was set for.', { minimum: 0 }),
  },
  { required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'] },
);

export const conditions = arr(
  'Conditions of the resource, one per type: Queued (waiting for a transfer slot), Ready and others set by the steps.',
  condition,
  {
    listType: 'map',
    mapKeys: ['type'],
    maxItems: 32,
  },
);

export const phases = [
  'New',
  'Accepted',
  'Prepared',
  'InProgress',
  'Finalizing',
  'Completed',
  'Failing',
  'Failed',
  'Canceling',
  'Canceled',
] as const;

const phase = str(
  'Where the resource is in its life. DataUpload: New -> Accepted (snapshot ready) -> Prepared (exposed) -> InProgress (transfer) ' +
    '-> Finalizing -> Completed; DataDownload skips Accepted. Failing -> Failed and Canceling -> Canceled clean up first.',
  { enum: phases },
);

const progress = obj('How much of the data has moved; updated every few seconds during the transfer.', {
  bytesDone: int('Bytes read (backup) or written (restore) so far.', { minimum: 0 }),
  totalBytes: int('Bytes to move in all, as far as known.', { minimum: 0 }),
  percent: int('bytesDone as a whole percentage of totalBytes, for the Progress% column.', {
    minimum: 0,
    maximum: 100,
  }),
});

const stepRecord = (step: string): ObjectField =>
  obj(
    `What the ${step} step did last.`,
    {
      attempts: int('Jobs started for this step so far (the Job name ends with the attempt number).', { minimum: 0 }),
      job: objectName("Name of the last Job of this step, in ferry's namespace."),
      startTime: timestamp('When the last attempt started.'),
      endTime: timestamp('When the last attempt ended.'),
      outcome: str('How the last attempt ended.', { enum: ['Succeeded', 'Failed'] }),
      message: str('What the last attempt reported (its termination message).', { maxLength: 32768 }),
    },
    { required: ['attempts'] },
  );

const steps = obj('Bookkeeping per step, written by the steps themselves.', {
  snapshot: stepRecord('snapshot'),
  expose: stepRecord('expose'),
  transfer: stepRecord('transfer'),
  finalize: stepRecord('finalize'),
  delete: stepRecord('delete'),
});

const exposure = obj(
  "Objects the expose step created in ferry's namespace to reach the data; finalize removes them.",
  {
    namespace: namespaceName("Namespace holding the exposure objects (ferry's namespace)."),
    pvc: objectName('PersistentVolumeClaim the transfer Job mounts.'),
    volumeSnapshot: objectName("VolumeSnapshot cloned into ferry's namespace."),
    volumeSnapshotContent: objectName('Pre-provisioned VolumeSnapshotContent behind the cloned VolumeSnapshot.'),
    pv: objectName('PersistentVolume made for a restore, bound to the target PVC by finalize.'),
  },
  { required: ['namespace'] },
);

const stats = obj(
  'Figures of the finished transfer.',
  {
    files: int('Files read or written.', { minimum: 0 }),
    bytes: int('Bytes read or written.', { minimum: 0 }),
    bytesAdded: int('Bytes of new data the repository did not hold yet (before compression).', { minimum: 0 }),
    bytesStored: int('Bytes those additions took in the repository (compressed, encrypted).', { minimum: 0 }),
    durationSeconds: num('How long the transfer took.', { minimum: 0 }),
  },
  { required: ['files', 'bytes', 'bytesAdded', 'bytesStored', 'durationSeconds'] },
);

export const commonStatus = {
  phase,
  progress,
  startTimestamp: timestamp('When the first step started.'),
  completionTimestamp: timestamp('When the resource reached Completed, Failed or Canceled.'),
  node: str('Node whose pod moves the data.', { pattern: dnsSubdomain, maxLength: 253 }),
  message: str('Human-readable summary of the last transition or failure.', { maxLength: 32768 }),
  conditions,
  steps,
  exposure,
  stats,
};

export const dataMover = str(
  'Data mover to use: "" or "ferry". Resources naming another data mover are left alone by ferry.',
  { maxLength: 253 },
);

export const operationTimeout = str('How long to wait for the snapshot to be ready and for each step.', {
  pattern: goDuration,
  default: '10m',
});

export const cancel = bool(
  'Set to true to cancel: ferry stops within seconds, cleans up and sets phase Canceled. Cannot be unset.',
  { default: false },
);

export const cronSchedule = (description: string, fallback?: string): StringField =>
  str(description, {
    pattern: {
      regex:
        '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9*,/?LW#A-Za-z-]+( [0-9*,/?LW#A-Za-z-]+){4})$',
      allowed: "a cron schedule of five fields such as '0 3 * * 0', or @daily, @weekly and the like",
    },
    maxLength: 128,
    ...(fallback === undefined ? {} : { default: fallback }),
  });

/** Tags of repository snapshots: key=value, at most `maxProperties` of them. */
export const tags = (description: string, maxProperties: number): MapField =>
  map(
    description,
    str('Tag value.', {
      maxLength: 256,
      pattern: { regex: '^[^,\\n]*$', allowed: 'text without commas or line breaks' },
    }),
    { maxProperties },
  );
