// The one extension point of the data path: a toxic is a small loop that reads chunks from
// its stub and writes (possibly delayed, cut, dropped) chunks on, until interrupted.
// Toxics are registered by Toxiproxy's type name in toxics/registry.ts.
import type { StreamItem } from './chunk-queue.js';

export interface ToxicStub {
  /** Next item from upstream in the chain; undefined when interrupted. Waits for room downstream first. */
  receive(): Promise<StreamItem | undefined>;
  /** Like receive(), but gives 'timeout' after `timeoutMs` without input. */
  receiveWithin(timeoutMs: number): Promise<StreamItem | undefined | 'timeout'>;
  /** Hands an item to the next stage (synchronous: nothing is ever held between stages). */
  send(item: StreamItem): void;
  /** Sleeps; false if interrupted first. */
  sleep(ms: number): Promise<boolean>;
  /** Ends this direction: the connection closes once the end reaches the far socket. */
  close(): void;
  /** Resets the whole connection at once (TCP RST on both sockets). */
  reset(): void;
  readonly interrupted: boolean;
  /** The run's seeded random source, in [0, 1). */
  readonly random: () => number;
  /** State that survives a restart of the toxic on this connection (e.g. limit_data's count). */
  readonly state: Record<string, number>;
}

export interface Toxic {
  pipe(stub: ToxicStub): Promise<void>;
  /** Called when the toxic is removed from a live connection. */
  cleanup?(stub: ToxicStub): void;
}

/** Every attribute of every 2.12 toxic is an integer; packet_loss (after 2.12) has floats. */
export type ToxicAttributes = Record<string, number>;

export interface ToxicDefinition {
  /** Toxiproxy's type name, e.g. "latency". */
  type: string;
  /** Attribute names in Toxiproxy's order; all default to 0 unless `defaults` says otherwise. */
  attributes: readonly string[];
  /** Attributes that take a float (the rest are integers). */
  floatAttributes?: readonly string[];
  defaults?: Readonly<ToxicAttributes>;
  create(attributes: ToxicAttributes): Toxic;
}

export type Direction = 'upstream' | 'downstream';

/** A toxic as configured on a proxy (what the API shows); shared by all its connections. */
export interface ToxicConfig {
  name: string;
  type: string;
  stream: Direction;
  toxicity: number;
  attributes: ToxicAttributes;
  definition: ToxicDefinition;
}
