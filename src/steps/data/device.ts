// Whether what the transfer pod mounts is there.
import { stat } from 'node:fs/promises';

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
