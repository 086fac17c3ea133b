// The transport bench's gRPC method (transport.bench.ts, transport-echo.ts).
import type * as grpc from '@grpc/grpc-js';

const passThrough = (b: Buffer): Buffer => b;

/** One bidi method whose messages are bytes as they are. */
export const echoService: grpc.ServiceDefinition = {
  stream: {
    path: '/limbo.bench.Echo/Stream',
    requestStream: true,
    responseStream: true,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  },
};
