// Preloaded (`node --import`) into every process test/e2e/readme.test.ts starts for a README command:
// a TCP connection to anything but loopback fails at once, before any lookup or packet, with an error
// saying what to do. The README's commands run offline; one that needs a real endpoint must be marked
// `<!-- readme-test: skip (reason) -->`, and if it is not, it fails loudly here instead of reaching out.
import net from 'node:net';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|\[::1\]|::ffff:127(?:\.\d{1,3}){3})$/i;
const connect = net.Socket.prototype.connect;

/** host and port of a `connect` call, in any of its forms (options, port + host, path, Node's normalized array). */
function target(args) {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (first && typeof first === 'object') return { host: first.path === undefined ? (first.host ?? 'localhost') : null, port: first.port };
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
  }
  return { host: null, port: undefined }; // a pipe or socket file
}

net.Socket.prototype.connect = function connectLoopbackOnly(...args) {
  const { host, port } = target(args);
  if (host !== null && !LOOPBACK.test(String(host))) {
    const message =
      `readme.test: blocked a connection to ${host}:${port}, outside loopback: the README's commands run offline; ` +
      'a block that needs a real endpoint gets <!-- readme-test: skip (needs a real endpoint) -->';
    process.stderr.write(`[${message}]\n`);
    const err = Object.assign(new Error(message), { code: 'ECONNREFUSED' });
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return connect.apply(this, args);
};
