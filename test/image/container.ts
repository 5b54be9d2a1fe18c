// Runs a command in ferry's image the way a step's securityContext would: read-only root file system, every
// capability dropped (then those asked for added), no privilege escalation, no network; the folders a test shares
// are bind-mounted.

import { podmanResult, type Ran } from '../cluster/image/podman.ts';

export interface Mount {
  host: string;
  at: string;
  readOnly?: boolean;
}

export interface ContainerOptions {
  /** `uid:gid`; default: the image's own user */
  user?: string;
  /** capabilities added after dropping all */
  capAdd?: string[];
  mounts?: Mount[];
  /** a program of the image other than its entry point (`ferry`) */
  entrypoint?: string;
}

export function inImage(image: string, args: string[], opts: ContainerOptions = {}): Promise<Ran> {
  const flags = ['run', '--rm', '--network=none', '--read-only', '--cap-drop=ALL', '--security-opt=no-new-privileges'];
  if (opts.user) flags.push(`--user=${opts.user}`);
  for (const cap of opts.capAdd ?? []) flags.push(`--cap-add=${cap}`);
  for (const m of opts.mounts ?? []) flags.push(`--volume=${m.host}:${m.at}:${m.readOnly ? 'ro' : 'rw'}`);
  if (opts.entrypoint) flags.push(`--entrypoint=${opts.entrypoint}`);
  return podmanResult([...flags, image, ...args], { purpose: `Running ${args.join(' ')} in ${image}` });
}
