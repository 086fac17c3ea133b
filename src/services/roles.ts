// The registry of `limbo serve <role>` roles.
import type { RoleDefinition } from './service.js';

export const roles: RoleDefinition[] = [];
