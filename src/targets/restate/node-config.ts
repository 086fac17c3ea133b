// The TOML configuration of one node of a local Restate cluster. Every address is on
// 127.0.0.1; the fabric address a node advertises (and the metadata-client addresses every
// node dials) may differ from the real one, so the testbed can put a proxy in front of it.
// Known to work with restate-server 1.7.12.

export interface NodeConfigInput {
  clusterName: string;
  nodeName: string;
  nodeId: number;
  baseDir: string;
  fabricPort: number;
  adminPort: number;
  ingressPort: number;
  advertisedAddress: string;
  /** Every node's advertised fabric address, this one's included. */
  metadataAddresses: readonly string[];
  partitions: number;
  replication: number;
}

const quote = (s: string): string => JSON.stringify(s);

export function nodeConfigToml(c: NodeConfigInput): string {
  return [
    `cluster-name = ${quote(c.clusterName)}`,
    `node-name = ${quote(c.nodeName)}`,
    `force-node-id = ${c.nodeId}`,
    `base-dir = ${quote(c.baseDir)}`,
    `roles = ["http-ingress", "admin", "worker", "log-server", "metadata-server"]`,
    `bind-address = ${quote(`127.0.0.1:${c.fabricPort}`)}`,
    `advertised-address = ${quote(c.advertisedAddress)}`,
    `auto-provision = false`,
    `default-num-partitions = ${c.partitions}`,
    `default-replication = ${c.replication}`,
    `rocksdb-total-memory-size = "256 MiB"`,
    `disable-telemetry = true`,
    `shutdown-timeout = "5s"`,
    `log-disable-ansi-codes = true`,
    ``,
    `[metadata-client]`,
    `type = "replicated"`,
    `addresses = [${c.metadataAddresses.map(quote).join(', ')}]`,
    ``,
    `[bifrost]`,
    `default-provider = "replicated"`,
    ``,
    `[admin]`,
    `bind-address = ${quote(`127.0.0.1:${c.adminPort}`)}`,
    ``,
    `[ingress]`,
    `bind-address = ${quote(`127.0.0.1:${c.ingressPort}`)}`,
    ``,
  ].join('\n');
}
