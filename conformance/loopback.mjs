// Preloaded into the suite (`node --import`): every server it starts listens on 127.0.0.1.
// Its mock servers call `listen(port)` without a host, which binds every interface, and read
// `address().port` at once; `listen(port, host)` would bind later (after a lookup), so the
// port-only forms are bound here synchronously, as Node does for them, but on 127.0.0.1.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = typeof args.at(-1) === 'function' ? args.pop() : undefined;
  const [port] = args;
  const portOnly =
    args.length <= 1 &&
    (port === undefined || typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port)));
  if (!portOnly || typeof this._listen2 !== 'function') {
    if (callback) args.push(callback);
    return listen.apply(this, args);
  }
  if (callback) this.once('listening', callback);
  this._listen2('127.0.0.1', Number(port ?? 0), 4, 511);
  return this;
};
