// The report's public surface.
export * from './junit.js';
export * from '../run-data/run-dir.js'; // re-exported: the run directory's layout is part of what a report user needs
export * from './write-report.js';
