// One copy of each string a run receives again and again. A run's spans repeat a few names,
// services and attribute values (and a trace id per span of its trace) tens of thousands of
// times, and every decode made each a string of its own: in a leader-kill run, 172,000
// strings holding 6.4 MiB, most of them copies of a few hundred.

/** Returns the one copy of `s` this interner has seen (or `s`, now that copy). */
export type Intern = (s: string) => string;

/** Strings longer than this are not kept (unique values: messages, payloads). */
export const INTERN_MAX_LENGTH = 64;

/**
 * An interner that remembers at most `maxEntries` strings of up to INTERN_MAX_LENGTH
 * characters; when it is full it forgets them all and starts again (the strings already
 * handed out stay shared).
 */
export function createInterner(maxEntries = 50_000): Intern {
  const seen = new Map<string, string>();
  return (s) => {
    if (s.length > INTERN_MAX_LENGTH) return s;
    const known = seen.get(s);
    if (known !== undefined) return known;
    if (seen.size >= maxEntries) seen.clear();
    seen.set(s, s);
    return s;
  };
}

/** No interning: each string as it came. */
export const noIntern: Intern = (s) => s;
