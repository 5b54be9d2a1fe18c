// The demo's closing summary: plain aligned lines (a script or a test can read them), with the figures a newcomer
// asks about (sizes, how long each step took, what deduplication saved, the repository snapshot) and where to look.
import { formatBytes } from '../../../src/cli/output.ts';
import type { DataDownload, DataUpload, FerryResource, StepName } from '../../../src/shared/api/types.ts';
import type { SampleInfo } from './sample.ts';
import type { Scene } from './scene.ts';

export interface Outcome {
  scene: Scene;
  sample: SampleInfo;
  upload: DataUpload;
  download: DataDownload;
  /** where the namespace's repository is */
  repository: string;
  /** differences between the source and the restored volume; empty when identical */
  differences: string[];
  kubeconfig: string;
}

const stepOrder: StepName[] = ['snapshot', 'expose', 'transfer', 'finalize'];

/** "snapshot 3s, expose 2s, ..." from status.steps. */
export function stepDurations(r: FerryResource): string {
  const steps = r.status?.steps ?? {};
  const seconds = (from: string, to: string): number => Math.round((Date.parse(to) - Date.parse(from)) / 1000);
  return stepOrder
    .flatMap((s) => {
      const rec = steps[s];
      return rec?.startTime && rec.endTime ? [`${s} ${seconds(rec.startTime, rec.endTime)}s`] : [];
    })
    .join(', ');
}

/** From creation to the terminal phase. */
function lifetime(r: FerryResource): string {
  const end = r.status?.completionTimestamp;
  return end && r.metadata.creationTimestamp
    ? `${Math.round((Date.parse(end) - Date.parse(r.metadata.creationTimestamp)) / 1000)}s`
    : '?';
}

function row(name: string, text: string): string {
  return `  ${name.padEnd(11)} ${text}`;
}

export function summaryLines(o: Outcome): string[] {
  const { scene, upload, download } = o;
  const stats = upload.status?.stats ?? { files: 0, bytes: 0, bytesAdded: 0, bytesStored: 0, durationSeconds: 0 };
  const saved = stats.bytes > 0 ? Math.round((1 - stats.bytesStored / stats.bytes) * 100) : 0;
  const matched =
    o.differences.length === 0 && upload.status?.phase === 'Completed' && download.status?.phase === 'Completed';
  const app = scene.appNamespace;
  const restore = scene.restoreNamespace;
  return [
    '',
    matched ? 'ferry demo: the restored volume matches the original.' : 'ferry demo: FAILED, see below.',
    row(
      'source',
      `${o.sample.files} files, ${o.sample.symlinks} symlinks, ${formatBytes(o.sample.bytes)} in PVC ${app}/${scene.pvc}`,
    ),
    row(
      'backup',
      `DataUpload ${app}/${upload.metadata.name} ${upload.status?.phase} in ${lifetime(upload)} (${stepDurations(upload)})`,
    ),
    row('snapshot', `${upload.status?.snapshotID ?? 'none'} in ${o.repository}`),
    row(
      'dedup',
      `${formatBytes(stats.bytes)} read, ${formatBytes(stats.bytesAdded)} new after deduplication, ${formatBytes(stats.bytesStored)} stored after compression (${saved}% saved)`,
    ),
    row(
      'restore',
      `DataDownload ${restore}/${download.metadata.name} ${download.status?.phase} in ${lifetime(download)} (${stepDurations(download)}), ${download.status?.stats?.files ?? 0} files into PVC ${restore}/${download.spec.targetPVC.name}`,
    ),
    row(
      'identical',
      o.differences.length === 0
        ? 'yes (content, mode, owner, mtime, symlink targets of every entry)'
        : `NO, ${o.differences.length} difference(s): ${o.differences.slice(0, 5).join('; ')}`,
    ),
    '',
    'Where to look:',
    `  export KUBECONFIG=${o.kubeconfig}`,
    `  kubectl get datauploads -n ${app}                 # phase, progress %, bytes`,
    `  kubectl describe dataupload backup -n ${app}      # conditions, stats and an Event for every transition`,
    `  kubectl get jobs -n ferry-system -l ferry.dev/uid=${upload.metadata.uid}   # the step Jobs`,
    `  kubectl get datadownloads,pvc -n ${restore}`,
    `  kubectl delete namespace ${app} ${restore}   # clean up (or run the demo with --clean)`,
  ];
}
