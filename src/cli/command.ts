// A CLI command: argv (after the command name) and env in, exit status out.
// Exit codes: 0 pass, 1 a check failed, 2 bad usage or input, 3 inconclusive
// (docs/architecture.md#commands-and-exit-codes).

export const exitCodes = { pass: 0, fail: 1, usage: 2, inconclusive: 3 } as const;

export interface Command {
  name: string;
  summary: string;
  run(argv: string[], env: NodeJS.ProcessEnv): Promise<number>;
}
