// A declared leadership transfer (`leadershipTransfer` in the declaration): the command run
// once, its arguments filled in with the current and the next leader, and the transfer done
// once the leadership probe names the next leader — so the `transfer-leadership` fault's
// window starts when leadership has moved, not when someone was merely asked to move it.
//
//   leaderOf(p) = etcd-1, next = etcd-3
//     sh -c 'etcdctl --endpoints=$1 move-leader …' sh {{leader:client}} {{next}}
//       ─▶ sh -c '…' sh 127.0.0.1:23791 etcd-3 ─▶ exit 0 ─▶ probe until etcd-3 leads
import { execFile } from 'node:child_process';
import { TargetError } from '../target.js';
import { waitFor } from '../../util/wait.js';
import type { LeadershipTransferDeclaration } from './declaration.js';
import { fill, type TemplateValues } from './template.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/** How long a declared transfer may take in all: the command and the confirmation, within timeoutMs. */
export function leadershipTransferBoundMs(t: LeadershipTransferDeclaration): number {
  return t.timeoutMs ?? DEFAULT_TIMEOUT_MS;
}
const OUTPUT_MAX = 1024 * 1024;

/** `{{leader}}`, `{{next}}`, `{{leader:PORT}}` and `{{next:PORT}}`, the transfer's own placeholders. */
const TRANSFER_PLACEHOLDER = /\{\{\s*(leader|next)(?::([^{}\s]+))?\s*\}\}/g;

/** The placeholders of a transfer argument that name a port, as [who, port] (for validation). */
export function transferPorts(text: string): [who: 'leader' | 'next', port: string][] {
  return [...text.matchAll(TRANSFER_PLACEHOLDER)].flatMap((m) =>
    m[2] !== undefined ? [[m[1] as 'leader' | 'next', m[2]] as [who: 'leader' | 'next', port: string]] : [],
  );
}

/** The argument without its transfer placeholders (what the usual template check reads). */
export const withoutTransferPlaceholders = (text: string): string => text.replace(TRANSFER_PLACEHOLDER, '');

/** One argument filled in: the transfer's placeholders first, then the leader's own templates. */
export function fillTransferArg(text: string, leader: TemplateValues, next: TemplateValues): string {
  const replaced = text.replace(TRANSFER_PLACEHOLDER, (_, who: 'leader' | 'next', port?: string) => {
    const v = who === 'leader' ? leader : next;
    if (port === undefined) return v.name;
    const p = v.ports[port];
    if (p === undefined) throw new TargetError(`{{${who}:${port}}}: ${v.name} has no port ${port}`);
    return `127.0.0.1:${p}`;
  });
  return fill(replaced, leader);
}

/**
 * Runs the declared transfer from `leader` to `next` and waits until `leads(next)` says so,
 * both within the declaration's bound; a failed command or a leader that did not move is a
 * TargetError naming what was run and what it printed.
 */
export async function transferLeadership(
  t: LeadershipTransferDeclaration,
  leader: TemplateValues,
  next: TemplateValues,
  env: NodeJS.ProcessEnv,
  nextLeads: () => Promise<boolean>,
): Promise<void> {
  const timeoutMs = t.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const args = (t.args ?? []).map((a) => fillTransferArg(a, leader, next));
  const startedMs = Date.now();
  await new Promise<void>((resolve, reject) => {
    execFile(
      t.command,
      args,
      { env, timeout: timeoutMs, maxBuffer: OUTPUT_MAX, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        if (err === null) return resolve();
        const said = `${stderr}${stdout}`.trim().split('\n').slice(-3).join(' | ');
        reject(
          new TargetError(
            `leadership transfer ${leader.name} -> ${next.name} failed (${t.command} ${args.join(' ')}): ${err.message.split('\n')[0]}${said !== '' ? `: ${said}` : ''}`,
          ),
        );
      },
    );
  });
  try {
    await waitFor(nextLeads, {
      intervalMs: 200,
      what: `${next.name} to lead after the transfer`,
      timeoutMs: Math.max(1000, timeoutMs - (Date.now() - startedMs)),
    });
  } catch (err) {
    throw new TargetError(
      `leadership transfer ${leader.name} -> ${next.name}: the command exited 0 but ${next.name} does not lead: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
