// The registry of `limbo serve <role>` roles, each loaded only when it is served (a log process
// does not load the processor and the ingress).
import { roleDescriptions } from './role-descriptions.js';
import type { RoleDefinition } from './service.js';

export interface RoleEntry {
  role: keyof typeof roleDescriptions;
  description: string;
  load(): Promise<RoleDefinition>;
}

const entry = (role: RoleEntry['role'], load: () => Promise<RoleDefinition>): RoleEntry => ({
  role,
  description: roleDescriptions[role],
  load,
});

export const roles: RoleEntry[] = [
  entry('log', async () => (await import('./log/role.js')).logRole),
  entry('processor', async () => (await import('./processor/role.js')).processorRole),
  entry('ingress', async () => (await import('./ingress/role.js')).ingressRole),
];
