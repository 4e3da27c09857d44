// Preloaded (`node --import`, through NODE_OPTIONS) into every process the tests start (test/e2e/helpers.ts
// `childEnv`, test/e2e/readme.test.ts): a TCP connection to anything but loopback fails at once, before any
// lookup or packet, with an error saying what happened. Each one is also appended to the file named by
// SKILLOPT_TEST_GUARD_LOG, which the test file's guard (test/setup/guard.ts) reads when the file ends: a
// child that caught the error and went on still fails the test file that started it.
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|::1|\[::1\]|::ffff:127(?:\.\d{1,3}){3})$/i;
const connect = net.Socket.prototype.connect;
const log = process.env.SKILLOPT_TEST_GUARD_LOG;

/** host and port of a `connect` call, in any of its forms (options, port + host, path, Node's normalized array). */
function target(args) {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (first && typeof first === 'object')
    return { host: first.path === undefined ? (first.host ?? 'localhost') : null, port: first.port };
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
  }
  return { host: null, port: undefined }; // a pipe or socket file
}

net.Socket.prototype.connect = function connectLoopbackOnly(...args) {
  const { host, port } = target(args);
  if (host !== null && !LOOPBACK.test(String(host))) {
    const message =
      `test guard: blocked a connection to ${host}:${port} from a child process (${process.argv.slice(1, 3).join(' ') || 'node -e'}): tests reach loopback only; ` +
      'a README or docs block that needs a real endpoint gets <!-- readme-test: skip (needs a real endpoint) -->';
    process.stderr.write(`[${message}]\n`);
    if (log) {
      try {
        appendFileSync(log, `${message}\n`);
      } catch {
        // the guard's own log is best effort: the connection is refused either way
      }
    }
    const err = Object.assign(new Error(message), { code: 'ECONNREFUSED' });
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return connect.apply(this, args);
};
