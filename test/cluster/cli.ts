// `npm run cluster -- up|build|down|status|env|second-site`: the cluster in a box for e2e tests and the demo (see README.md here).
import { dirname } from 'node:path';
import { defineCommand, runMain } from 'citty';
import { consola } from 'consola';
import { down, problems, readRecord, up, watchOwner } from './box.ts';
import { cacheDirs, ensureBinaries, ensureNodeBinaries } from './build.ts';
import type { BoxRecord } from './box.ts';
import { buildImage, exportImage } from './image/build.ts';
import { statePaths } from './paths.ts';
import { upSecondSite } from './second-site.ts';

function exports(record: Pick<BoxRecord, 'kubeconfig' | 's3'>): string[] {
  return [
    `export KUBECONFIG=${record.kubeconfig}`,
    `export FERRY_S3_ENDPOINT=${record.s3.endpoint}`,
    `export FERRY_S3_BUCKET=${record.s3.bucket}`,
    `export FERRY_S3_REGION=${record.s3.region}`,
    `export AWS_ACCESS_KEY_ID=${record.s3.accessKey}`,
    `export AWS_SECRET_ACCESS_KEY=${record.s3.secretKey}`,
  ];
}

const upCommand = defineCommand({
  meta: {
    name: 'up',
    description: 'Build what is missing, start the box (or reuse the running one) and print how to use it',
  },
  args: {
    nodes: { type: 'string', description: 'number of nodes (default 2, or FERRYBOX_NODES)' },
    'snapshot-ready-delay': {
      type: 'string',
      description: 'time before a new snapshot is readyToUse, e.g. 3s (default 0s)',
    },
  },
  async run({ args }) {
    const { record, reused } = await up({
      nodes: args.nodes === undefined ? undefined : Number(args.nodes),
      snapshotReadyDelay: args['snapshot-ready-delay'],
      log: (line) => consola.info(line),
    });
    if (!reused) consola.success(`The box is up in ${record.timings.total} s (${JSON.stringify(record.timings)}).`);
    else {
      consola.success(`The box started at ${record.startedAt} is running; reusing it.`);
      if (dirname(record.ferrybox ?? '') !== (await cacheDirs()).ferryboxDir) {
        consola.warn(
          "The box runs an older build of test/cluster's Go code; `npm run cluster -- down` and `up` to use the current one.",
        );
      }
    }
    console.log(
      ['', ...exports(record), '', "kubectl get nodes   # kubectl from Debian's kubernetes-client works"].join('\n'),
    );
  },
});

const buildCommand = defineCommand({
  meta: { name: 'build', description: 'Only build what the cache lacks (for CI, before the tests)' },
  async run() {
    const b = await ensureBinaries((line) => consola.info(line));
    consola.success(
      `${b.built ? 'Built' : 'Cached'} in ${b.seconds.toFixed(1)} s: ${dirname(b.bin['kube-apiserver'])}, ${b.ferrybox}`,
    );
    const nodes = await ensureNodeBinaries((line) => consola.info(line));
    consola.success(`The nodes' binaries in ${nodes.seconds.toFixed(1)} s: ${dirname(nodes.bin.kubelet)}`);
  },
});

const imageCommand = defineCommand({
  meta: {
    name: 'image',
    description: "Build ferry's image (docker.io/library/ferry:dev) with podman on a base made without any registry",
  },
  args: {
    export: { type: 'string', description: 'also write it to this archive, for `ctr -n k8s.io images import`' },
  },
  async run({ args }) {
    const image = await buildImage({ log: (line) => consola.info(line) });
    consola.success(
      `Built ${image.tag} on ${image.base} in ${image.seconds.toFixed(1)} s: ${(image.size / 2 ** 20).toFixed(0)} MiB`,
    );
    if (args.export) {
      await exportImage(args.export, image.tag);
      consola.success(`Wrote ${args.export}`);
    }
  },
});

const downCommand = defineCommand({
  meta: {
    name: 'down',
    description: 'Stop every process of the box (its state stays in test/cluster/.state until the next up)',
  },
  async run() {
    consola.success((await down((line) => consola.info(line))) ? 'The box is stopped.' : 'No box was running.');
  },
});

const statusCommand = defineCommand({
  meta: { name: 'status', description: 'Say whether the box runs, and what is wrong if it does not' },
  async run() {
    const record = await readRecord();
    if (!record) {
      consola.info(`No box recorded in ${statePaths().root}.`);
      process.exitCode = 1;
      return;
    }
    const issues = await problems(record);
    for (const issue of issues) consola.warn(issue);
    if (issues.length) process.exitCode = 1;
    else
      consola.success(
        `Running since ${record.startedAt}: apiserver ${record.server}, nodes ${record.nodes.join(', ')}, S3 ${record.s3.endpoint}.`,
      );
  },
});

const envCommand = defineCommand({
  meta: { name: 'env', description: 'Print shell exports for the running box: eval "$(npm run -s cluster -- env)"' },
  async run() {
    const record = await readRecord();
    if (!record) throw new Error('No box is running; start one with `npm run cluster -- up`.');
    console.log(exports(record).join('\n'));
  },
});

const secondSiteCommand = defineCommand({
  meta: {
    name: 'second-site',
    description:
      'Start the second site next to the running box (another cluster with its own MinIO and node) and print its exports',
  },
  async run() {
    const site = await upSecondSite((line) => consola.info(line));
    consola.success(
      `The second site runs: apiserver ${site.server}, node ${site.nodes.join(', ')}, S3 ${site.s3.endpoint}.`,
    );
    console.log(exports(site).join('\n'));
  },
});

const watchOwnerCommand = defineCommand({
  meta: { name: 'watch-owner', description: 'Internal: stop the box once the given process has exited', hidden: true },
  args: { pid: { type: 'positional', required: true } },
  async run({ args }) {
    await watchOwner(Number(args.pid));
  },
});

await runMain(
  defineCommand({
    meta: {
      name: 'cluster',
      description:
        'The cluster in a box: a real Kubernetes control plane, S3, and kubelets with containerd and a CSI driver',
    },
    subCommands: {
      up: upCommand,
      build: buildCommand,
      image: imageCommand,
      down: downCommand,
      status: statusCommand,
      env: envCommand,
      'second-site': secondSiteCommand,
      'watch-owner': watchOwnerCommand,
    },
  }),
);
