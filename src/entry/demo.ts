// `npm run demo [-- --clean]`: ferry end to end on the cluster in a box (test/cluster/README.md). Starts the box
// (or reuses the running one), installs ferry from deploy/, creates a storage location on the box's MinIO and an
// application PVC with data, backs it up with a DataUpload while showing its progress, restores it with a DataDownload
// into another namespace, compares the two volumes entry by entry and prints a summary. Exit code 0 only when the
// backup and the restore completed and every file matched; 1 otherwise. --clean removes what the demo made.
import { consola } from 'consola';
import { problems, readRecord, up, adminAccess } from '../../test/cluster/box.ts';
import { Kube } from '../../test/cluster/kube.ts';
import { compareTrees } from '../../test/support/compare-tree.ts';
import { installFerry } from '../../test/support/ferry-install.ts';
import { writeSample } from '../demo/sample.ts';
import { api, restoredVolume, setUp, tearDown } from '../demo/scene.ts';
import { summaryLines } from '../demo/summary.ts';
import { watchResource } from '../demo/watch.ts';
import { formatBytes } from '../cli/output.ts';
import { repositoryLocation } from '../shared/location/repository.ts';

const phaseTimeoutMs = 20 * 60_000;

async function startBox(): Promise<Awaited<ReturnType<typeof up>>['record']> {
  const running = await readRecord();
  if (!running || (await problems(running)).length > 0) {
    consola.start('Starting the cluster in a box (etcd, kube-apiserver, controllers, MinIO, emulated nodes). The first start on a '
      + 'machine builds them from source: about 15 minutes on 2 cores, cached in ~/.cache/ferry afterwards; later starts take about 15 s.');
  }
  const { record, reused } = await up({ log: (line) => consola.info(line) });
  consola.success(reused ? `Reusing the running cluster in a box (${record.server}).` : `The cluster in a box is up in ${record.timings.total} s.`);
  return record;
}

async function main(clean: boolean): Promise<number> {
  const record = await startBox();
  const kube = new Kube(adminAccess(record));
  try {
    consola.start('Installing ferry from deploy/ (CRDs, dispatcher webhook, RBAC, step Job templates)...');
    await installFerry(record);
    consola.success('ferry is installed in namespace ferry-system.');

    const scene = await setUp(kube, record.s3);
    consola.success(`BackupStorageLocation ${scene.location} on ${record.s3.endpoint}/${record.s3.bucket}; namespaces ${scene.appNamespace} and ${scene.restoreNamespace}.`);
    const sample = await writeSample(scene.volumePath);
    consola.success(`PVC ${scene.appNamespace}/${scene.pvc} holds ${sample.files} files, ${sample.symlinks} symlinks, ${formatBytes(sample.bytes)}.`);

    consola.start(`Backing up: DataUpload ${scene.appNamespace}/backup`);
    await kube.create(`${api}/namespaces/${scene.appNamespace}/datauploads`, {
      apiVersion: 'ferry.dev/v1alpha1', kind: 'DataUpload', metadata: { name: 'backup' }, spec: { sourcePVC: scene.pvc, backupStorageLocation: scene.location },
    });
    const upload = await watchResource(kube, `${api}/namespaces/${scene.appNamespace}/datauploads/backup`, 'backup ', { timeoutMs: phaseTimeoutMs });

    let download = upload;
    let differences = ['the backup did not complete'];
    if (upload.final.status?.phase === 'Completed') {
      consola.start(`Restoring into another namespace: DataDownload ${scene.restoreNamespace}/restore`);
      await kube.create(`${api}/namespaces/${scene.restoreNamespace}/datadownloads`, {
        apiVersion: 'ferry.dev/v1alpha1', kind: 'DataDownload', metadata: { name: 'restore' },
        spec: { targetPVC: { name: scene.pvc }, backupStorageLocation: scene.location, source: { dataUpload: { name: 'backup', namespace: scene.appNamespace } } },
      });
      download = await watchResource(kube, `${api}/namespaces/${scene.restoreNamespace}/datadownloads/restore`, 'restore', { timeoutMs: phaseTimeoutMs });
      differences = download.final.status?.phase === 'Completed'
        ? await compareTrees(scene.volumePath, await restoredVolume(kube, scene, scene.pvc), { mtimeToleranceNs: 1000n })
        : ['the restore did not complete'];
    }
    const location = (await kube.get(`${api}/namespaces/ferry-system/backupstoragelocations/${scene.location}`)).spec;
    const lines = summaryLines({
      scene, sample, upload: upload.final, download: download.final, uploadSeconds: upload.seconds, downloadSeconds: download.seconds,
      repository: repositoryLocation(location, scene.appNamespace), differences, kubeconfig: record.kubeconfig,
    });
    process.stdout.write(`${lines.join('\n')}\n`);
    for (const r of [upload.final, download.final]) if (r.status?.phase !== 'Completed') consola.error(`${r.kind} ${r.metadata.name}: ${r.status?.message ?? 'no message'}`);
    if (clean) {
      await tearDown(kube, scene);
      consola.success(`Removed the demo's namespaces, location and Secrets (${scene.id}).`);
    }
    return differences.length === 0 ? 0 : 1;
  } finally {
    kube.close();
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
