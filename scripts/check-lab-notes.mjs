// History belongs in git, not in the tree: fails when a comment in code, or a line of the docs,
// carries a date, a session, issue or stop number — the marks of a lab notebook. Code is read
// for its comments only (a date in a test's data is data); Markdown whole, but its code blocks.
//
//   node scripts/check-lab-notes.mjs   (part of npm run check)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const roots = ['src', 'scripts', 'bench', 'chaos', 'targets', 'dashboards', 'test', 'docs', 'seeds', '.ci'];
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '--', ...roots, 'README.md'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|mjs|js|sh|yml|yaml|md)$/.test(f) || f === '.ci/run');

const marks = [
  { re: /\b(session|issue|stop|ticket)\s+#?\d+/i, what: 'a session, issue or stop number' },
  // Another project's issue, named with it (`Restate #4513`, `Toxiproxy #631`), is a citation.
  { re: /(?<!(Restate|Toxiproxy|and|,)\s*)(^|[\s(])#\d{1,5}\b/, what: 'a ticket number' },
  { re: /\b20\d\d-[01]\d-[0-3]\d\b/, what: 'a date' },
];

/** The comment part of a line of code, or '' (a string that holds // is rare enough here). */
function commentOf(line, hash) {
  const t = line.trimStart();
  if (t.startsWith('//') || t.startsWith('*') || t.startsWith('/*')) return t;
  if (hash && t.startsWith('#')) return t;
  const i = line.indexOf(' // ');
  return i >= 0 ? line.slice(i) : '';
}

const found = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // listed but gone (an untracked file removed meanwhile)
  }
  const markdown = file.endsWith('.md');
  const hash = /\.(sh|yml|yaml)$/.test(file) || file === '.ci/run';
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (markdown && line.trimStart().startsWith('```')) fenced = !fenced;
    const part = markdown ? (fenced ? '' : line) : commentOf(line, hash);
    if (part === '') return;
    for (const m of marks)
      if (m.re.test(part)) {
        found.push(`${file}:${i + 1}: ${m.what}: ${part.trim().slice(0, 120)}`);
        break;
      }
  });
}
if (found.length > 0) {
  process.stderr.write(
    `check-lab-notes: ${found.length} line(s) carry history that belongs in commit messages:\n${found.join('\n')}\n`,
  );
  process.exit(1);
}
process.stdout.write(`check-lab-notes: ${files.length} files, no dates, session, issue or ticket numbers\n`);
