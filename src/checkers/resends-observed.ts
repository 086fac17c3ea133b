// Where the ingress's way to a processor was hurt (a toxic or cut on an ingress->processor link,
// or the processor itself killed, paused, restarted or deposed), the fixed protocol must have
// resent: limbo_ingress_resends_total moved during or shortly after the window.
import { metricNames } from '../protocol/names.js';
import type { FaultWindow } from '../run-data/run-data.js';
import type { Checker } from './checker.js';
import { windowCounterChecker } from './window-counter-check.js';

export interface ResendsObservedOptions {
  graceMs?: number;
}

export function hurtsIngress(w: FaultWindow): boolean {
  return w.affects.some((a) => a.startsWith('ingress->') || a.startsWith('processor-'));
}

export function resendsObserved(options: ResendsObservedOptions = {}): Checker {
  return windowCounterChecker({
    name: 'resendsObserved',
    metrics: [metricNames.ingressResendsTotal],
    relevant: hurtsIngress,
    what: 'fault that hurt the ingress-to-processor path',
    graceMs: options.graceMs ?? 5000,
  });
}
