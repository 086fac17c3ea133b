// The registry of `limbo serve <role>` roles.
import type { RoleDefinition } from './service.js';
import { processorRole } from './processor/role.js';
import { ingressRole } from './ingress/role.js';

export const roles: RoleDefinition[] = [processorRole, ingressRole];
