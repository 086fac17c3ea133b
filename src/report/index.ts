// The report's public surface.
export * from './junit.js';
export * from './run-dir.js';
export * from './write-report.js';
