// Finds and loads a declared target for `--target`: a path (`./targets/etcd.limbo.ts`, or a
// `.json` file of the same shape without the client adapter's functions), or a name `NAME`
// found as `targets/NAME.limbo.ts` in the working directory, then in limbo's own checkout.
// The file is validated before anything starts (a DeclarationError names the bad field).
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../util/errors.js';
import { importTypeScript } from '../../launch/load-ts.js';
import { isDeclaredTarget, type DeclaredTarget } from './declaration.js';
import { validateDeclaration, type ValidateOptions } from './validate.js';

const SUFFIX = '.limbo.ts';
/** limbo's own checkout (dist/src/targets/declarative → the repository root). */
const packageRoot = fileURLToPath(new URL('../../../../', import.meta.url));

export const looksLikePath = (target: string): boolean =>
  /[/\\]/.test(target) || /\.(m?ts|m?js|json)$/.test(target);

/** The declaration file `target` names, or undefined when it names none. */
export function declarationFile(target: string, cwd = process.cwd()): string | undefined {
  if (looksLikePath(target)) {
    const file = resolve(cwd, target);
    if (!existsSync(file)) throw new UsageError(`--target ${target}: no such declaration file`);
    return file;
  }
  if (!/^[A-Za-z0-9._-]+$/.test(target)) return undefined;
  for (const root of [cwd, packageRoot]) {
    const file = resolve(root, 'targets', target + SUFFIX);
    if (existsSync(file)) return file;
  }
  return undefined;
}

export async function loadDeclaration(file: string, options: ValidateOptions = {}): Promise<DeclaredTarget> {
  const shown = relative(process.cwd(), file) || file;
  let value: unknown;
  try {
    if (file.endsWith('.json')) value = JSON.parse(readFileSync(file, 'utf8'));
    else {
      value = (await importTypeScript(file)).default;
      // A default export that is a CommonJS module's namespace nests the declaration.
      if (!isDeclaredTarget(value) && isDeclaredTarget((value as { default?: unknown } | undefined)?.default))
        value = (value as { default: unknown }).default;
    }
  } catch (err) {
    // One line: a compiler's report (esbuild's "Build failed with 1 error:\n<where>: ERROR: …") joined up.
    const why = (err instanceof Error ? err.message : String(err))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .join(' ');
    throw new UsageError(`${shown}: cannot load: ${why}`, { cause: err });
  }
  return validateDeclaration(value, shown, options);
}
