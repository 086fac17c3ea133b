// What bin/limbo.js runs: the CLI from the runner's bundle (dist/src/cli/limbo.bundle.mjs,
// scripts/bundle-services.mjs) when it is current and LIMBO_RUNNER_BUNDLE is not `off`, else
// from the tsc output. The bundle is one file instead of ~450 (ours, grpc-js, OpenTelemetry,
// prom-client): ~9 MiB less resident memory for the runner's whole life and a faster start.
// Only node:fs and two small files load before the choice.
import './compile-cache.js'; // first: so the bundle's bytecode is cached too (Node ≥ 22.1)
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleIfCurrent } from '../launch/bundle.js';

export const runnerEntryFiles = {
  bundle: fileURLToPath(new URL('./limbo.bundle.mjs', import.meta.url)),
  modules: fileURLToPath(new URL('./runner-bundle.js', import.meta.url)),
  buildInfo: fileURLToPath(new URL('../../.tsbuildinfo', import.meta.url)),
};

/** The file the runner's library and CLI load from: the bundle when current, else the modules. */
export function runnerEntry(env: NodeJS.ProcessEnv = process.env, files = runnerEntryFiles): string {
  return bundleIfCurrent(files.bundle, files.modules, files.buildInfo, env.LIMBO_RUNNER_BUNDLE === 'off');
}

export type RunnerLibrary = typeof import('./runner-bundle.js');

/** Runs `limbo <argv…>` from runnerEntry: the bundle, or module by module (a command loads only its own modules). */
export async function startLimbo(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const entry = runnerEntry(env);
  const { runLimbo } =
    entry === runnerEntryFiles.bundle
      ? ((await import(pathToFileURL(entry).href)) as RunnerLibrary)
      : await import('./cli.js');
  runLimbo(argv);
}

/** The library and CLI as `limbo` runs them (runnerEntry). */
export async function runnerLibrary(env: NodeJS.ProcessEnv = process.env): Promise<RunnerLibrary> {
  return (await import(pathToFileURL(runnerEntry(env)).href)) as RunnerLibrary;
}
