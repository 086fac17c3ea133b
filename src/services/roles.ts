// The registry of `limbo serve <role>` roles.
import type { RoleDefinition } from './service.js';
import { logRole } from './log/role.js';

export const roles: RoleDefinition[] = [logRole];
