// The registry of `limbo serve <role>` roles.
import type { RoleDefinition } from './service.js';
import { logRole } from './log/role.js';
import { processorRole } from './processor/role.js';
import { ingressRole } from './ingress/role.js';

export const roles: RoleDefinition[] = [logRole, processorRole, ingressRole];
