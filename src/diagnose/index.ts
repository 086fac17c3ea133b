// The diagnosis of a failing run (docs/traces-and-report.md#why-a-run-failed).
export { diagnose, faultName } from './diagnose.js';
export { diagnosisHeadline, formatDiagnosis, groupSentence } from './sentence.js';
export { describeLeadership, LeadershipIndex } from './leadership.js';
export { opHops } from './hops.js';
