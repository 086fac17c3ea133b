// Every wait has a bound: `bounded` rejects with a TimeoutError naming what was awaited unless
// the promise settles in time (the promise itself is not cancelled).
import { TimeoutError } from './errors.js';

export async function bounded<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new TimeoutError(`${what}: no answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
