// The one place the app-backup step meets the hooks module (src/shared/hooks/): its stage runner and the pod exec
// over the apiserver's pods/exec. Tests hand the step fakes instead.
import { runStage } from '../../shared/hooks/stage.ts';
import { apiserverExec } from '../../shared/hooks/apiserver-exec.ts';
import { loadKubeConfig } from '../../shared/kube/config.ts';
import type { AppBackupDeps } from './context.ts';

export function appBackupDeps(): AppBackupDeps {
  return { runHooks: runStage, exec: apiserverExec(loadKubeConfig()) };
}
