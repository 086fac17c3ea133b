// One line per `limbo serve <role>`, for its help: apart from the roles so the role table lists
// them without loading every service.
export const roleDescriptions = {
  log: 'the durable log server with metadata store and cluster controller',
  processor: 'a partition processor node: replicas, leadership, invoker, RPC server for the ingress',
  ingress: 'the HTTP ingress: invocation ids, routing by partition table, resends',
} as const;
