// JUnit XML for CI: one testsuite per suite run, one testcase per check. A failed check is a
// <failure>; an inconclusive one is <skipped> with its reason (CI shows it as not green), and
// the evidence summary goes into <system-out>.
import { diagnosisHeadline } from '../diagnose/sentence.js';
import type { CheckResult, Diagnosis } from '../run-data/verdict.js';

export interface JUnitSuite {
  name: string;
  target: string;
  seed: number;
  durationMs: number;
  timestamp: string;
  checks: readonly CheckResult[];
  /** Why the run failed: each failure's message and text start with its group's sentence. */
  diagnosis?: Diagnosis;
}

// eslint-disable-next-line no-control-regex -- the XML 1.0 character ranges include tab, LF and CR
const NOT_XML_CHAR = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function escapeXml(text: string): string {
  // Characters XML 1.0 forbids are dropped; the five specials are escaped.
  return text.replace(NOT_XML_CHAR, '').replace(/[<>&"']/g, (c) => {
    switch (c) {
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '&':
        return '&amp;';
      case '"':
        return '&quot;';
      default:
        return '&apos;';
    }
  });
}

export function toJUnitXml(suites: readonly JUnitSuite[]): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const all = suites.flatMap((s) => s.checks);
  const failures = all.filter((c) => c.verdict === 'fail').length;
  const skipped = all.filter((c) => c.verdict === 'inconclusive').length;
  const totalSec = suites.reduce((t, s) => t + s.durationMs, 0) / 1000;
  lines.push(
    `<testsuites name="limbo" tests="${all.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${totalSec.toFixed(3)}">`,
  );
  for (const s of suites) {
    const f = s.checks.filter((c) => c.verdict === 'fail').length;
    const k = s.checks.filter((c) => c.verdict === 'inconclusive').length;
    const name = escapeXml(`${s.name} [${s.target}]`);
    lines.push(
      `  <testsuite name="${name}" tests="${s.checks.length}" failures="${f}" errors="0" skipped="${k}" time="${(s.durationMs / 1000).toFixed(3)}" timestamp="${escapeXml(s.timestamp)}">`,
    );
    lines.push(
      `    <properties><property name="seed" value="${s.seed}"/><property name="target" value="${escapeXml(s.target)}"/></properties>`,
    );
    for (const c of s.checks) {
      lines.push(
        `    <testcase name="${escapeXml(c.name)}" classname="${escapeXml(`limbo.${s.name}`)}" time="0">`,
      );
      if (c.verdict === 'fail') {
        const why = diagnosisHeadline(s.diagnosis, c.name);
        const message = why !== undefined ? `${why} | ${c.summary}` : c.summary;
        const text = (why !== undefined ? `${why}\n` : '') + evidenceText(c);
        lines.push(`      <failure message="${escapeXml(message)}" type="fail">${escapeXml(text)}</failure>`);
      } else if (c.verdict === 'inconclusive')
        lines.push(`      <skipped message="${escapeXml(`inconclusive: ${c.summary}`)}"/>`);
      lines.push(`      <system-out>${escapeXml(`${c.verdict}: ${c.summary}`)}</system-out>`);
      lines.push('    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return lines.join('\n') + '\n';
}

function evidenceText(c: CheckResult): string {
  const parts: string[] = [];
  if (c.evidence.invocationIds?.length) parts.push(`invocation ids: ${c.evidence.invocationIds.join(' ')}`);
  if (c.evidence.traceIds?.length) parts.push(`trace ids: ${c.evidence.traceIds.join(' ')}`);
  parts.push(JSON.stringify(c.evidence.details, null, 2).slice(0, 20_000));
  return parts.join('\n');
}
