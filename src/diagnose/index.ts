// The diagnosis of a failing run (docs/traces-and-report.md#why-a-run-failed).
export { diagnose, faultName, groupKeyOf } from './diagnose.js';
export { diagnosisHeadline, faultText, formatDiagnosis, groupSentence } from './sentence.js';
export { describeLeadership, LeadershipIndex, sec } from './leadership.js';
export { opHops } from './hops.js';
