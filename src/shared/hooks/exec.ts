// Running one command in one container of a pod, as an AppBackup's hooks do: the interface the hook stages use, so
// they are tested without a cluster; ./apiserver-exec.ts implements it over the apiserver's pods/exec.

export interface ExecRequest {
  namespace: string;
  pod: string;
  container: string;
  /** argv, not a shell line */
  command: string[];
  /** the command is killed (or, where it cannot be, abandoned) after this long and the run counts as timed out */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  /** absent when the command did not end by itself (timeout, abort, lost stream) */
  exitCode?: number;
  timedOut: boolean;
  /** the end of stdout and stderr, bounded */
  output: string;
  /** why the command could not be run or followed to its end */
  error?: string;
}

export interface PodExec {
  exec(req: ExecRequest): Promise<ExecResult>;
}
