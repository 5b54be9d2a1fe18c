// The one place the app-backup step meets the hooks module (src/shared/hooks/): its stage runner and the pod exec
// over the apiserver's pods/exec. The module is built on another branch; at the merge this body becomes
//   import { runStage } from '../../shared/hooks/stage.ts';
//   import { apiserverExec } from '../../shared/hooks/apiserver-exec.ts';
//   import { loadKubeConfig } from '../../shared/kube/config.ts';
//   return { runHooks: runStage, exec: apiserverExec(loadKubeConfig()) };
import type { AppBackupDeps } from './context.ts';

export function appBackupDeps(): AppBackupDeps {
  throw new Error('hooks module not merged: src/steps/app/hooks-wiring.ts is completed at the merge');
}
