// A StrykerJS reporter plugin (stryker.config.mjs loads it): when Stryker has placed its
// mutants and before it tests any, it writes each mutant's id with its spot, mutator and
// replacement to the file LIMBO_MUTATION_IDS names. The command runner tells the judge
// (judge.mjs) only the active mutant's id (__STRYKER_ACTIVE_MUTANT__); this file turns that id
// back into the mutant the driver sampled, and so into the suites that judge it.
import { writeFileSync } from 'node:fs';
import { relative, sep } from 'node:path';

class MutantIdsReporter {
  // typed-inject's list of what the constructor takes: nothing.
  static inject = [];

  onMutationTestingPlanReady({ mutantPlans }) {
    const out = process.env.LIMBO_MUTATION_IDS;
    if (out === undefined || out === '') return;
    const ids = mutantPlans.map(({ mutant: m }) => ({
      id: m.id,
      file: relative(process.cwd(), m.fileName).split(sep).join('/'),
      location: m.location,
      mutatorName: m.mutatorName,
      replacement: m.replacement,
    }));
    // Synchronously: Stryker starts the first mutant's command as soon as the reporters return.
    writeFileSync(out, JSON.stringify(ids));
  }
}

// What declareClassPlugin(PluginKind.Reporter, …) of @stryker-mutator/api returns, written out so
// the plugin needs no import of Stryker's packages.
export const strykerPlugins = [
  { kind: 'Reporter', name: 'limbo-mutant-ids', injectableClass: MutantIdsReporter },
];
