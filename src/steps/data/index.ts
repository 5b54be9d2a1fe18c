// The five steps by name: what `ferry-step <step>` runs.
import type { StepName } from '../../shared/api/types.ts';
import type { Step } from '../context.ts';
import { deleteData } from './delete.ts';
import { expose } from './expose.ts';
import { finalize } from './finalize.ts';
import { snapshot } from './snapshot.ts';
import { transfer } from './transfer.ts';

export const steps: Record<StepName, Step> = { snapshot, expose, transfer, finalize, delete: deleteData };
