// One log server per data directory: two writers appending to the same partition files
// would interleave frames and hand out the same LSNs twice. The lock is a pid file; a lock
// left by a process that no longer runs (kill -9) is stale and taken over.
import { open, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LogServerError } from './errors.js';
import { pidAlive } from '../../util/pid-alive.js';

export interface DataDirLock {
  release(): Promise<void>;
}

const LOCK_FILE = 'LOCK';

export async function lockDataDir(dataDir: string, pid = process.pid): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE);
  try {
    const fh = await open(path, 'wx');
    try {
      await fh.writeFile(`${pid}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    return { release: () => unlink(path).catch(() => undefined) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // The lock file is there: its holder is alive (refused), or gone (stale, taken over). A file
  // removed meanwhile reads as empty, a stale lock, and is written anew.
  const holder = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
  if (Number.isInteger(holder) && holder > 0 && holder !== pid && pidAlive(holder))
    throw new LogServerError(
      'E_DATA_DIR_LOCKED',
      `data dir ${dataDir} is in use by process ${holder} (remove ${path} if that is not a log server)`,
    );
  await writeFile(path, `${pid}\n`);
  return { release: () => unlink(path).catch(() => undefined) };
}
