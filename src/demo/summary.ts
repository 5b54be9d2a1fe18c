// The demo's closing summary: plain aligned lines (a script or a test can read them), with the figures a newcomer
// asks about (sizes, how long each step took, what deduplication saved, the repository snapshot) and where to look.
import type { KubeObject } from '../../test/cluster/kube.ts';
import { formatBytes } from '../cli/output.ts';
import type { SampleInfo } from './sample.ts';
import type { Scene } from './scene.ts';

export interface Outcome {
  scene: Scene;
  sample: SampleInfo;
  upload: KubeObject;
  download: KubeObject;
  uploadSeconds: number;
  downloadSeconds: number;
  /** where the namespace's repository is */
  repository: string;
  /** differences between the source and the restored volume; empty when identical */
  differences: string[];
  kubeconfig: string;
}

const stepOrder = ['snapshot', 'expose', 'transfer', 'finalize'];

/** "snapshot 3s, expose 2s, ..." from status.steps. */
export function stepDurations(obj: KubeObject): string {
  const steps: Record<string, { startTime?: string; endTime?: string }> = obj.status?.steps ?? {};
  return stepOrder.filter((s) => steps[s]?.startTime && steps[s]?.endTime)
    .map((s) => `${s} ${Math.round((Date.parse(steps[s].endTime!) - Date.parse(steps[s].startTime!)) / 1000)}s`).join(', ');
}

function row(name: string, text: string): string {
  return `  ${name.padEnd(11)} ${text}`;
}

export function summaryLines(o: Outcome): string[] {
  const { scene, upload, download } = o;
  const stats = upload.status?.stats ?? {};
  const saved = stats.bytes > 0 ? Math.round((1 - stats.bytesStored / stats.bytes) * 100) : 0;
  const matched = o.differences.length === 0 && upload.status?.phase === 'Completed' && download.status?.phase === 'Completed';
  const app = scene.appNamespace;
  const restore = scene.restoreNamespace;
  return [
    '',
    matched ? 'ferry demo: the restored volume matches the original.' : 'ferry demo: FAILED, see below.',
    row('source', `${o.sample.files} files, ${o.sample.symlinks} symlinks, ${formatBytes(o.sample.bytes)} in PVC ${app}/${scene.pvc}`),
    row('backup', `DataUpload ${app}/backup ${upload.status?.phase} in ${Math.round(o.uploadSeconds)}s (${stepDurations(upload)})`),
    row('snapshot', `${upload.status?.snapshotID ?? 'none'} in ${o.repository}`),
    row('dedup', `${formatBytes(stats.bytes ?? 0)} read, ${formatBytes(stats.bytesAdded ?? 0)} new after deduplication, ${formatBytes(stats.bytesStored ?? 0)} stored after compression (${saved}% saved)`),
    row('restore', `DataDownload ${restore}/restore ${download.status?.phase} in ${Math.round(o.downloadSeconds)}s (${stepDurations(download)}), ${download.status?.stats?.files ?? 0} files into PVC ${restore}/${download.spec.targetPVC.name}`),
    row('identical', o.differences.length === 0 ? 'yes (content, mode, owner, mtime, symlink targets of every entry)' : `NO, ${o.differences.length} difference(s): ${o.differences.slice(0, 5).join('; ')}`),
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
