// Where the Restate binaries are: npm ships them in per-platform packages
// (`@restatedev/restate-server-linux-x64`, `@restatedev/restatectl-linux-x64`, installed as
// optional dependencies of `@restatedev/restate-server` and `@restatedev/restatectl`). We run
// the binaries themselves, not the packages' node wrappers, so that kill -9 and SIGSTOP reach
// the server and not a wrapper process.
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { LimboError } from '../../util/errors.js';

export class RestateBinaryNotFoundError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_RESTATE_BINARY', message, options);
  }
}

const require = createRequire(import.meta.url);

function resolveBinary(pkg: string, bin: string): string {
  const name = `@restatedev/${pkg}-${platform()}-${arch()}`;
  try {
    return require.resolve(`${name}/bin/${bin}`);
  } catch (err) {
    throw new RestateBinaryNotFoundError(`${bin}: ${name} is not installed (npm ci installs it)`, {
      cause: err,
    });
  }
}

export const restateServerBinary = (): string => resolveBinary('restate-server', 'restate-server');
export const restatectlBinary = (): string => resolveBinary('restatectl', 'restatectl');
