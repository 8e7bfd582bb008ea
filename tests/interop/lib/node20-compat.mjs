// Node 20 lacks Promise.withResolvers (Node 22+), which it-queue (under mortice, under
// @libp2p/peer-store) calls on every libp2p node. Import this module before anything from
// node_modules; on Node >= 22 it does nothing.
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
