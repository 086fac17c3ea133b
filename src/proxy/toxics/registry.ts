// Toxic types by Toxiproxy's name. Adding a toxic = one file + one line here.
import type { ToxicDefinition } from '../toxic.js';
import { bandwidthToxic } from './bandwidth.js';
import { latencyToxic } from './latency.js';
import { limitDataToxic } from './limit-data.js';
import { noopToxicDefinition } from './noop.js';
import { packetLossToxic } from './packet-loss.js';
import { resetPeerToxic } from './reset-peer.js';
import { slicerToxic } from './slicer.js';
import { slowCloseToxic } from './slow-close.js';
import { timeoutToxic } from './timeout.js';

export const toxicRegistry: ReadonlyMap<string, ToxicDefinition> = new Map(
  [
    noopToxicDefinition,
    latencyToxic,
    bandwidthToxic,
    slowCloseToxic,
    timeoutToxic,
    resetPeerToxic,
    slicerToxic,
    limitDataToxic,
    packetLossToxic,
  ].map((d) => [d.type, d]),
);
