// Creates a directory and its missing parents, one level at a time. (Node 20's
// `mkdir(…, { recursive: true })` spins forever on some paths, e.g. under /proc.)
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

const DEPTH_MAX = 128;

export async function ensureDir(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = dir;
  for (let depth = 0; depth < DEPTH_MAX; depth++) {
    try {
      const s = await stat(at);
      if (!s.isDirectory()) throw new Error(`${at} is not a directory`);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(at);
      const parent = dirname(at);
      if (parent === at) break;
      at = parent;
    }
  }
  for (const d of missing.reverse()) {
    try {
      await mkdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
