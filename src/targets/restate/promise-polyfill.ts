// Node 20 lacks `Promise.withResolvers` (Node 22 has it); the Restate SDK (1.17) calls it while
// it runs a handler, and without it every call hangs. Import this module before the SDK.

interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const PromiseWith = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof PromiseWith.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export const promiseWithResolversPolyfilled = PromiseWith.withResolvers !== undefined;
