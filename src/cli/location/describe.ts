// `ferry location describe NAME`: the location's settings, which Secrets it uses (never their values), its last
// recorded check, a live check of the bucket with these credentials (unless --no-check), and its events.
import { defineCommand } from 'citty';
import type { ProbeResult } from '../../shared/location/probe.ts';
import { checkLocation, type StoredLocation } from '../../shared/location/check.ts';
import { renderDescribe, type Section } from '../resource/describe.ts';
import { eventsAbout, type EventLine } from '../resource/events.ts';
import { fetchOne } from '../resource/fetch.ts';
import { withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { age, timeAndAge, timestamp } from '../resource/time.ts';
import { locationKubeArgs } from './flags.ts';

function checkSection(check: ProbeResult | undefined): Section {
  if (!check) return { title: 'Check', empty: 'skipped (--no-check)' };
  if (check.ok)
    return {
      title: 'Check',
      fields: [
        ['Result', 'reachable'],
        ['Message', check.message],
        ['Repositories', check.repositories.join(', ') || '<none>'],
      ],
    };
  return {
    title: 'Check',
    fields: [
      ['Result', `failed (${check.failure})`],
      ['Message', check.message],
      ['Fix', check.fix],
    ],
  };
}

export function describeLocation(l: StoredLocation, check: ProbeResult | undefined, events: EventLine[]): string {
  const { s3 } = l.spec;
  return renderDescribe(
    [
      ['Name', l.metadata.name],
      ['Namespace', l.metadata.namespace],
      ['Created', timeAndAge(l.metadata.creationTimestamp)],
    ],
    [
      {
        title: 'S3',
        fields: [
          ['Endpoint', s3.endpoint],
          ['Bucket', s3.bucket],
          ['Prefix', s3.prefix || '<none>'],
          ['Region', s3.region],
          ['Path style', String(s3.forcePathStyle ?? true)],
          ['CA bundle', s3.caBundle ? 'set' : '<none>'],
        ],
      },
      {
        title: 'Secrets',
        fields: [
          [
            'Credentials',
            `${l.spec.credential.name} (keys ${l.spec.credential.accessKeyIDKey ?? 'AWS_ACCESS_KEY_ID'}, ${l.spec.credential.secretAccessKeyKey ?? 'AWS_SECRET_ACCESS_KEY'})`,
          ],
          ['Repository password', `${l.spec.repositoryPassword.name} (key ${l.spec.repositoryPassword.key})`],
        ],
      },
      { title: 'Allowed namespaces', lines: l.spec.allowedNamespaces, empty: '<none>' },
      {
        title: 'Cross-namespace restores',
        lines: (l.spec.crossNamespaceRestores ?? []).map((r) => `${r.from} -> ${r.to.join(', ')}`),
      },
      {
        title: 'Status',
        fields: [
          ['Phase', l.status?.phase ?? 'Unknown'],
          ['Message', l.status?.message],
          ['Last check', timestamp(l.status?.lastValidationTime)],
        ],
      },
      checkSection(check),
      {
        title: 'Events',
        table: {
          headers: ['Type', 'Reason', 'Age', 'From', 'Message'],
          rows: events.map((e) => [e.type, e.reason, age(e.time), e.from, e.note]),
        },
      },
    ],
  );
}

export default defineCommand({
  meta: { name: 'describe', description: 'Show a storage location in detail, with a live check of its bucket' },
  args: {
    name: { type: 'positional', required: true, description: 'the location', valueHint: 'NAME' },
    check: {
      type: 'boolean',
      description: 'check the bucket with the stored credentials (--no-check skips it)',
      default: true,
    },
    ...locationKubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    const failed = await withKube(args, async ({ kube, ferryNamespace }) => {
      const location = await fetchOne<StoredLocation>(kube, 'BackupStorageLocation', ferryNamespace, name);
      const check = args.check ? await checkLocation(kube, ferryNamespace, location) : undefined;
      const events = await eventsAbout(kube, location);
      if (isDocument(format)) printDocument({ location, check, events }, format);
      else process.stdout.write(describeLocation(location, check, events));
      return check !== undefined && !check.ok;
    });
    if (failed) throw new Error(`BackupStorageLocation "${name}" failed its check (see above).`);
  },
});
