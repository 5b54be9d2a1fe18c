// What the transfer templates (jobs/transfer-*.yaml) ask of the container runtime, read from the files themselves
// so a test runs the image as a cluster would run those templates today.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { checkoutDir } from '../cluster/paths.ts';

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
}

interface CronJob {
  spec: {
    jobTemplate: {
      spec: {
        template: { spec: { securityContext?: SecurityContext; containers: { securityContext?: SecurityContext }[] } };
      };
    };
  };
}

export interface TransferSecurity {
  /** `uid:gid` */
  user: string;
  capabilities: string[];
}

/** The step container's user and added capabilities; refuses a template the image tests' runtime flags do not match. */
export async function transferTemplate(file: string): Promise<TransferSecurity> {
  const pod = (load(await readFile(join(checkoutDir, 'jobs', file), 'utf8')) as CronJob).spec.jobTemplate.spec.template
    .spec;
  const container = pod.containers[0]?.securityContext ?? {};
  const merged = { ...pod.securityContext, ...container };
  if (
    merged.readOnlyRootFilesystem !== true ||
    merged.allowPrivilegeEscalation !== false ||
    merged.capabilities?.drop?.join() !== 'ALL'
  ) {
    throw new Error(
      `jobs/${file}: the image tests run containers read-only, without privilege escalation and with every capability dropped; the template now asks otherwise`,
    );
  }
  return {
    user: `${merged.runAsUser ?? 65532}:${merged.runAsGroup ?? 65532}`,
    capabilities: merged.capabilities.add ?? [],
  };
}
