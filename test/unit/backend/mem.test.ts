import { MemBackend } from '../../../src/shared/backend/mem.ts';
import { backendContract } from './contract.ts';

backendContract({ name: 'mem', make: async () => new MemBackend() });
