import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backendContract } from './contract.ts';

backendContract({ name: 'mem', make: async () => new MemBackend() });
