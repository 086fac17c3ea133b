// StrykerJS's configuration for the mutation score of the reference cluster against limbo's
// chaos suites. Run it through `npm run mutation` (scripts/mutation/run.mjs), which samples the
// mutants, passes their spots as `--mutate` ranges and sets the LIMBO_MUTATION_* files the
// judge and the reporter share (docs/mutation.md).
//
// Stryker copies the checkout into a sandbox under .stryker-tmp/, places every selected mutant
// in src/services at once (mutant schemata: each behind a check of the active mutant's id),
// builds the sandbox with `npm run build` (tsc, then the services' bundle), and runs the judge
// once per mutant with __STRYKER_ACTIVE_MUTANT__ set; the services, child processes of the
// runner, inherit it. The judge's exit code is the verdict: non-zero kills the mutant.
const out = process.env.LIMBO_MUTATION_OUT ?? 'runs-mutation/stryker';

export default {
  packageManager: 'npm',
  testRunner: 'command',
  commandRunner: { command: 'node scripts/mutation/judge.mjs' },
  buildCommand: 'npm run -s build',
  mutate: ['src/services/**/*.ts'],
  // The command runner cannot tell which test reached which mutant: the judge picks the suites
  // from limbo's own coverage map instead.
  coverageAnalysis: 'off',
  // Each mutant's suites start a whole cluster: one at a time on a small machine.
  concurrency: 1,
  plugins: ['@stryker-mutator/*', './scripts/mutation/plan-reporter.mjs'],
  reporters: ['json', 'progress-append-only', 'limbo-mutant-ids'],
  jsonReporter: { fileName: `${out}/mutation.json` },
  tempDirName: '.stryker-tmp',
  // Run output, builds and caches stay out of the sandbox (the build remakes dist).
  ignorePatterns: ['/runs*', '/dist', '/.limbo', '/artifacts', '/reports', '/.stryker-tmp'],
  // The judge runs up to --max-suites suites; run.mjs sets --timeoutMS to their budget.
  timeoutMS: 600000,
  timeoutFactor: 1,
  cleanTempDir: true,
};
