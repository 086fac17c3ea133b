// limbo's public API: what chaos suites and other programs import as `limbo`.
export { metricNames, spanAttributes } from './protocol/names.js';
export type { ResendReason } from './protocol/names.js';
