/**
 * No orphan MCP servers (docs/agents.md#mcp): every server process a suite starts is known to the main
 * thread of its process, which kills whatever is still running when the process exits, on Ctrl-C
 * (SIGINT), SIGTERM, and when the session host closes. A suite stops its own servers when it ends; this is
 * the net under a run that is cancelled, crashes or is interrupted before it gets there.
 *
 * Suites run in Vitest's worker threads, and a thread can be terminated without running any of its code,
 * so a worker reports each server it starts and stops over a BroadcastChannel to the main thread (where
 * the session host listens: `watchMcpServers`). A worker of a `forks` pool is a process's main thread and
 * keeps the list itself. A pid is killed only while it still belongs to the process that was started
 * (its start time is checked where /proc has it), never a later process that reused the number.
 */
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import { forgetAtExit, procStart, releaseAtExit, type Held } from '../util/lock.ts';

const CHANNEL = 'skillopt:mcp-servers';

interface Tracked {
  pid: number;
  start: string | null;
}

type Note = { t: 'started' | 'stopped'; pid: number; start: string | null };

/**
 * This thread's state, in a global slot: Vitest evaluates a suite's modules afresh for every run of a reused
 * worker thread, and the list (and the one exit hook) must outlive that.
 */
interface ReaperState {
  running: Map<number, Tracked>;
  channel: BroadcastChannel | null;
  poster: BroadcastChannel | null;
  held: Held | null;
  /** A worker thread kills its servers when it exits normally (a terminated one cannot: the main thread does). */
  exitHooked: boolean;
}
const SLOT = Symbol.for('skillopt.mcp-reaper');
const state: ReaperState = ((globalThis as { [SLOT]?: ReaperState })[SLOT] ??= {
  running: new Map(),
  channel: null,
  poster: null,
  held: null,
  exitHooked: false,
});
const running = state.running;

function killAll(): void {
  for (const p of [...running.values()]) kill(p);
  running.clear();
}

function kill(p: Tracked): void {
  if (p.start !== null && procStart(p.pid) !== p.start) return; // exited, and perhaps the pid was reused
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function holdInMainThread(): void {
  if (state.held) return;
  const held: Held = {
    release() {
      killAll();
      state.held = null;
    },
  };
  state.held = held;
  releaseAtExit(held);
}

/** A server process was started: it is killed at exit unless `stopped` is called first. */
export function trackServer(pid: number): { stopped(): void } {
  const p: Tracked = { pid, start: procStart(pid) };
  if (isMainThread) {
    running.set(pid, p);
    holdInMainThread();
  } else {
    running.set(pid, p);
    post({ t: 'started', pid, start: p.start });
    if (!state.exitHooked) {
      state.exitHooked = true;
      process.once('exit', () => {
        for (const p of [...state.running.values()]) kill(p);
      });
    }
  }
  return {
    stopped() {
      running.delete(pid);
      if (!isMainThread) post({ t: 'stopped', pid, start: p.start });
    },
  };
}

function post(note: Note): void {
  if (!state.poster) {
    state.poster = new BroadcastChannel(CHANNEL);
    state.poster.unref();
  }
  state.poster.postMessage(note);
}

/**
 * The main thread's side: record the servers the worker threads of this process start, and kill those still
 * running at exit, on SIGINT/SIGTERM, or at `close()` (the session host's close). Idempotent.
 */
export function watchMcpServers(): { close(): void } {
  if (!state.channel) {
    const channel = new BroadcastChannel(CHANNEL);
    state.channel = channel;
    channel.unref();
    channel.onmessage = (event) => {
      const note = (event as { data: Note }).data;
      if (note.t === 'started') {
        running.set(note.pid, { pid: note.pid, start: note.start });
        holdInMainThread();
      } else running.delete(note.pid);
    };
  }
  return {
    close() {
      killAll();
      if (state.held) {
        forgetAtExit(state.held);
        state.held = null;
      }
    },
  };
}

/** Server processes this thread knows to be running (tests). */
export function trackedServers(): number[] {
  return [...running.keys()];
}
