// The faults' public surface.
export * from './fault.js';
export * from './selectors.js';
export * from './toxic-faults.js';
export * from './process-faults.js';
export * from './schedule.js';
export * from './registry.js';
export * from './follower-lag.js';
export * from './isolate.js';
export * from './evidence.js';
export * from './recent-traffic.js';
export * from './service-faults.js';
