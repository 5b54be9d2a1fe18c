// The CustomResourceDefinitions of ferry.dev/v1alpha1, made from the field descriptions (./fields.ts). The YAML in
// deploy/crds/ is this output, written by scripts/generate-crds.ts; a unit test fails when the two differ.
import { fieldsOf } from './fields.ts';
import type { DescribedKind } from './fields.ts';
import { openAPISchema } from './openapi.ts';
import type { OpenAPISchema } from './openapi.ts';
import { appPlurals } from './app.ts';
import { copyPlurals } from './copy.ts';
import { group, plurals as transferPlurals, version } from './types.ts';
import { toYaml } from './yaml.ts';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

interface KindInfo {
  scope: 'Namespaced';
  singular: string;
  shortNames: string[];
  description: string;
  columns: PrinterColumn[];
}

const plurals: Record<DescribedKind, string> = { ...transferPlurals, ...appPlurals, ...copyPlurals };

const age: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
};

const phaseColumn: PrinterColumn = {
  name: 'Phase',
  type: 'string',
  jsonPath: '.status.phase',
  description: 'Where the resource is in its life.',
};

const messageColumn: PrinterColumn = {
  name: 'Message',
  type: 'string',
  jsonPath: '.status.message',
  description: 'Last transition or failure.',
  priority: 1,
};

const volumesColumn: PrinterColumn = {
  name: 'Volumes',
  type: 'string',
  jsonPath: '.status.volumesDone',
  description: 'Volumes finished of all.',
};

const transferColumns = (where: PrinterColumn): PrinterColumn[] => [
  phaseColumn,
  {
    name: 'Progress%',
    type: 'integer',
    jsonPath: '.status.progress.percent',
    description: 'Percentage of the bytes moved.',
  },
  { name: 'Bytes Done', type: 'integer', jsonPath: '.status.progress.bytesDone', description: 'Bytes moved so far.' },
  {
    name: 'Total Bytes',
    type: 'integer',
    jsonPath: '.status.progress.totalBytes',
    description: 'Bytes to move in all.',
  },
  {
    name: 'Location',
    type: 'string',
    jsonPath: '.spec.backupStorageLocation',
    description: 'BackupStorageLocation used.',
  },
  where,
  { name: 'Node', type: 'string', jsonPath: '.status.node', description: 'Node moving the data.', priority: 1 },
  messageColumn,
  age,
];

const kinds: Record<DescribedKind, KindInfo> = {
  BackupStorageLocation: {
    scope: 'Namespaced',
    singular: 'backupstoragelocation',
    shortNames: ['bsl'],
    description:
      "An S3 bucket holding ferry's repositories (one per source namespace), the Secrets to reach and encrypt it, and which namespaces may use it. Lives in ferry's namespace.",
    columns: [
      {
        name: 'Phase',
        type: 'string',
        jsonPath: '.status.phase',
        description: 'Whether the location was reachable at the last check.',
      },
      { name: 'Endpoint', type: 'string', jsonPath: '.spec.s3.endpoint', description: 'S3 endpoint.' },
      { name: 'Bucket', type: 'string', jsonPath: '.spec.s3.bucket', description: 'Bucket.' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.s3.prefix', description: 'Key prefix.', priority: 1 },
      {
        name: 'Maintenance',
        type: 'string',
        jsonPath: '.status.maintenance.lastOutcome',
        description: 'Outcome of the latest maintenance run (prune or check) on any of its repositories.',
      },
      {
        name: 'Last Task',
        type: 'string',
        jsonPath: '.status.maintenance.lastTask',
        description: 'Task of the latest maintenance run.',
        priority: 1,
      },
      {
        name: 'Maintained',
        type: 'date',
        jsonPath: '.status.maintenance.lastRunTime',
        description: 'When the latest maintenance run started.',
        priority: 1,
      },
      age,
    ],
  },
  DataUpload: {
    scope: 'Namespaced',
    singular: 'dataupload',
    shortNames: ['du'],
    description:
      "A backup of one PVC: ferry snapshots it and moves the snapshot's data into an encrypted, deduplicated, restic-compatible repository.",
    columns: transferColumns({
      name: 'PVC',
      type: 'string',
      jsonPath: '.spec.sourcePVC',
      description: 'PVC backed up.',
    }),
  },
  DataDownload: {
    scope: 'Namespaced',
    singular: 'datadownload',
    shortNames: ['dd'],
    description: 'A restore of repository data into a PVC; the PVC becomes usable only once its data is complete.',
    columns: transferColumns({
      name: 'PVC',
      type: 'string',
      jsonPath: '.spec.targetPVC.name',
      description: 'PVC restored into.',
    }),
  },
  BackupSchedule: {
    scope: 'Namespaced',
    singular: 'backupschedule',
    shortNames: ['bs'],
    description:
      'Backups of PVCs on a cron schedule, each run one DataUpload per PVC, with expiry and restic-style retention. A CronJob owned by the schedule starts the runs; deleting the schedule keeps its backups unless annotated ferry.dev/delete-backups: "true".',
    columns: [
      { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'Cron schedule.' },
      {
        name: 'TimeZone',
        type: 'string',
        jsonPath: '.spec.timeZone',
        description: 'Time zone of the schedule.',
        priority: 1,
      },
      { name: 'Suspend', type: 'string', jsonPath: '.spec.suspend', description: 'Whether runs are suspended.' },
      {
        name: 'Last Run',
        type: 'string',
        jsonPath: '.status.lastRun.outcome',
        description: 'Outcome of the latest run.',
      },
      {
        name: 'Last Schedule',
        type: 'date',
        jsonPath: '.status.lastScheduleTime',
        description: 'When the latest run was due.',
      },
      {
        name: 'Last Success',
        type: 'date',
        jsonPath: '.status.lastSuccessfulTime',
        description: 'When the latest fully successful run was due.',
      },
      {
        name: 'Next',
        type: 'string',
        jsonPath: '.status.nextScheduleTime',
        description: 'When the next run is due.',
        priority: 1,
      },
      {
        name: 'Missed',
        type: 'integer',
        jsonPath: '.status.missedRuns',
        description: 'Runs that were due but did not start.',
        priority: 1,
      },
      age,
    ],
  },
  AppBackup: {
    scope: 'Namespaced',
    singular: 'appbackup',
    // not `backup`/`restore` nor Velero's short names: kubectl keeps finding Velero's kinds by those
    shortNames: ['ab'],
    description:
      "A backup of an application's volumes at one instant: pre hooks, one group snapshot of all its PVCs, post hooks, then one DataUpload per volume. Deleting it deletes its DataUploads and their data.",
    columns: [
      phaseColumn,
      volumesColumn,
      { name: 'Bytes', type: 'integer', jsonPath: '.status.bytesDone', description: 'Bytes moved so far.' },
      {
        name: 'Consistency',
        type: 'string',
        jsonPath: '.status.consistency',
        description: 'Group (one instant for all volumes) or PerVolume.',
      },
      {
        name: 'Location',
        type: 'string',
        jsonPath: '.spec.backupStorageLocation',
        description: 'BackupStorageLocation used.',
      },
      messageColumn,
      age,
    ],
  },
  AppRestore: {
    scope: 'Namespaced',
    singular: 'apprestore',
    shortNames: ['ar'],
    description:
      'A restore of the volumes of an AppBackup into this namespace, one DataDownload per volume; Completed only when every volume is.',
    columns: [
      phaseColumn,
      volumesColumn,
      { name: 'Backup', type: 'string', jsonPath: '.spec.appBackup.name', description: 'AppBackup restored.' },
      messageColumn,
      age,
    ],
  },
  DataCopy: {
    scope: 'Namespaced',
    singular: 'datacopy',
    shortNames: ['dcopy'],
    description:
      "A copy of one DataUpload's backup into another BackupStorageLocation (typically in another site), written with that location's own keys; a failed copy is retried and never fails the backup.",
    columns: [
      phaseColumn,
      { name: 'DataUpload', type: 'string', jsonPath: '.spec.dataUpload', description: 'DataUpload copied.' },
      {
        name: 'Location',
        type: 'string',
        jsonPath: '.spec.backupStorageLocation',
        description: 'BackupStorageLocation the copy goes to.',
      },
      {
        name: 'Attempts',
        type: 'integer',
        jsonPath: '.status.attempts',
        description: 'Attempts started.',
        priority: 1,
      },
      {
        name: 'Bytes Sent',
        type: 'integer',
        jsonPath: '.status.stats.bytesSent',
        description: 'Bytes of packs written to the destination.',
        priority: 1,
      },
      messageColumn,
      age,
    ],
  },
  CopyPolicy: {
    scope: 'Namespaced',
    singular: 'copypolicy',
    shortNames: ['cpol'],
    description:
      "Which backups of one BackupStorageLocation are copied into another as they complete (one DataCopy per backup). Lives in ferry's namespace.",
    columns: [
      { name: 'Source', type: 'string', jsonPath: '.spec.sourceLocation', description: 'Location copied from.' },
      {
        name: 'Destination',
        type: 'string',
        jsonPath: '.spec.destinationLocation',
        description: 'Location copied to.',
      },
      {
        name: 'Copies',
        type: 'integer',
        jsonPath: '.status.copiesCompleted',
        description: 'Copies this policy made that completed.',
      },
      {
        name: 'Retrying',
        type: 'integer',
        jsonPath: '.status.copiesRetrying',
        description: 'Copies waiting for a retry.',
        priority: 1,
      },
      {
        name: 'Suspend',
        type: 'string',
        jsonPath: '.spec.suspend',
        description: 'Whether new copies are suspended.',
        priority: 1,
      },
      {
        name: 'Last Copy',
        type: 'date',
        jsonPath: '.status.lastCopyTime',
        description: 'When the last copy completed.',
      },
      age,
    ],
  },
};

/** The whole object's schema: spec and status from the descriptions, around Kubernetes' own fields. */
export function resourceSchema(kind: DescribedKind): OpenAPISchema {
  const { spec, status } = fieldsOf[kind];
  return {
    type: 'object',
    description: kinds[kind].description,
    properties: {
      apiVersion: {
        type: 'string',
        description: 'Versioned schema of this representation of the object (ferry.dev/v1alpha1).',
      },
      kind: { type: 'string', description: 'REST resource this object represents.' },
      metadata: { type: 'object' },
      spec: openAPISchema(spec),
      status: openAPISchema(status),
    },
    required: ['spec'],
  };
}

export function customResourceDefinition(kind: DescribedKind): Record<string, unknown> {
  const info = kinds[kind];
  const plural = plurals[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: info.singular,
        shortNames: info.shortNames,
        categories: ['ferry'],
      },
      scope: info.scope,
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.columns,
          schema: { openAPIV3Schema: resourceSchema(kind) },
        },
      ],
    },
  };
}

export const describedKinds = Object.keys(kinds) as DescribedKind[];

/** The file in deploy/crds/ holding the CRD of `kind`. */
export function crdFileName(kind: DescribedKind): string {
  return `${group}_${plurals[kind]}.yaml`;
}

/** deploy/crds/<file>: the rendered YAML of each CRD, keyed by file name. */
export function crdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const kind of describedKinds) {
    const header =
      '# Generated from src/shared/api/fields.ts by scripts/generate-crds.ts; edit the description there, not this file.\n';
    files.set(crdFileName(kind), header + toYaml(customResourceDefinition(kind)));
  }
  return files;
}
