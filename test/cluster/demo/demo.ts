// `npm run demo [-- --clean]`: ferry end to end on the cluster in a box (test/cluster/README.md). Starts the box
// (or reuses the running one), installs ferry from deploy/, creates a storage location on the box's MinIO and an
// application PVC with data, backs it up with a DataUpload while showing its progress, restores it with a DataDownload
// into another namespace, compares the two volumes entry by entry and prints a summary. It drives the cluster with
// ferry's own client and the CLI's --wait display. Exit code 0 only when the backup and the restore completed and
// every file matched; 1 otherwise (a failed resource's message says why). --clean removes what the demo made.
import { consola } from 'consola';
import { problems, readRecord, up } from '../box.ts';
import { compareTrees } from '../../support/compare-tree.ts';
import { installFerry } from '../../support/ferry-install.ts';
import { waitForEnd } from '../../../src/cli/kube/wait.ts';
import { formatBytes } from '../../../src/cli/output.ts';
import { openKube } from '../../../src/cli/resource/kube.ts';
import { writeSample } from './sample.ts';
import { ferryNamespace, restoredVolume, setUp, tearDown } from './scene.ts';
import { summaryLines } from './summary.ts';
import {
  apiVersion,
  type BackupStorageLocation,
  type DataDownload,
  type DataUpload,
} from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { repositoryLocation } from '../../../src/shared/location/repository.ts';

async function startBox(): Promise<Awaited<ReturnType<typeof up>>['record']> {
  const running = await readRecord();
  if (!running || (await problems(running)).length > 0) {
    consola.start(
      'Starting the cluster in a box (etcd, kube-apiserver, controllers, MinIO, kubelets with containerd and a CSI driver). The first start on a ' +
        'machine builds them from source: about 15 minutes on 2 cores, cached in ~/.cache/ferry afterwards; later starts take about 15 s.',
    );
  }
  const { record, reused } = await up({ log: (line) => consola.info(line) });
  consola.success(
    reused
      ? `Reusing the running cluster in a box (${record.server}).`
      : `The cluster in a box is up in ${record.timings.total} s.`,
  );
  return record;
}

async function main(clean: boolean): Promise<number> {
  const record = await startBox();
  // ferry's own client, on the box's admin kubeconfig, as `ferry --kubeconfig` would use it
  const { kube, close } = openKube({ kubeconfig: record.kubeconfig });
  try {
    consola.start('Installing ferry from deploy/ (CRDs, dispatcher webhook, RBAC, step Job templates)...');
    await installFerry(record);
    consola.success(`ferry is installed in namespace ${ferryNamespace}.`);

    const scene = await setUp(kube, record.s3);
    consola.success(
      `BackupStorageLocation ${scene.location} on ${record.s3.endpoint}/${record.s3.bucket}; namespaces ${scene.appNamespace} and ${scene.restoreNamespace}.`,
    );
    const sample = await writeSample(scene.volumePath);
    consola.success(
      `PVC ${scene.appNamespace}/${scene.pvc} holds ${sample.files} files, ${sample.symlinks} symlinks, ${formatBytes(sample.bytes)}.`,
    );

    consola.start(`Backing up: DataUpload ${scene.appNamespace}/backup`);
    await kube.create<DataUpload & KubeObject>({
      apiVersion,
      kind: 'DataUpload',
      metadata: { name: 'backup', namespace: scene.appNamespace },
      spec: { sourcePVC: scene.pvc, backupStorageLocation: scene.location },
    });
    const upload = (await waitForEnd(kube, 'DataUpload', scene.appNamespace, 'backup', {
      quiet: false,
      pollMs: 500,
    })) as DataUpload;

    consola.start(`Restoring into another namespace: DataDownload ${scene.restoreNamespace}/restore`);
    await kube.create<DataDownload & KubeObject>({
      apiVersion,
      kind: 'DataDownload',
      metadata: { name: 'restore', namespace: scene.restoreNamespace },
      spec: {
        targetPVC: { name: scene.pvc },
        backupStorageLocation: scene.location,
        source: { dataUpload: { name: 'backup', namespace: scene.appNamespace } },
      },
    });
    const download = (await waitForEnd(kube, 'DataDownload', scene.restoreNamespace, 'restore', {
      quiet: false,
      pollMs: 500,
    })) as DataDownload;

    consola.start('Comparing the restored volume with the original, entry by entry...');
    const differences = await compareTrees(scene.volumePath, await restoredVolume(kube, scene, scene.pvc));
    const location = await kube.get<BackupStorageLocation & KubeObject>({
      kind: 'BackupStorageLocation',
      namespace: ferryNamespace,
      name: scene.location,
    });
    const lines = summaryLines({
      scene,
      sample,
      upload,
      download,
      differences,
      kubeconfig: record.kubeconfig,
      repository: location ? repositoryLocation(location.spec, scene.appNamespace) : '?',
    });
    process.stdout.write(`${lines.join('\n')}\n`);
    if (clean) {
      await tearDown(kube, scene);
      consola.success(`Removed the demo's namespaces, location and Secrets (${scene.id}).`);
    }
    return differences.length === 0 ? 0 : 1;
  } finally {
    close();
  }
}

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--clean');
if (unknown.length > 0) {
  process.stderr.write(`Unknown argument ${unknown[0]}; usage: npm run demo [-- --clean]\n`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = await main(args.includes('--clean'));
  } catch (err) {
    consola.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  }
}
