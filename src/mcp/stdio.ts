/**
 * The stdio transport of an MCP server (the SDK's `Transport` interface, framed with the SDK's own
 * `ReadBuffer` / `serializeMessage`). The SDK's StdioClientTransport does the same but hides its child
 * process; this one keeps what a run needs to report and clean up (docs/agents.md#mcp):
 * - how the process ended (exit code or signal) and the tail of its stderr, for the one-line error of a
 *   server that fails to start or dies mid-case;
 * - its pid, handed to the reaper (reaper.ts) so it is killed if the run ends without stopping it;
 * - a stop that closes stdin, then sends SIGTERM, then SIGKILL, waiting for the exit each time.
 *
 * The child gets a minimal environment (PATH, HOME, … as the SDK's default) plus the server's own `env`:
 * the run's API keys are not passed on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { trackServer } from './reaper.ts';

/** The variables a server inherits from this process (the SDK's default list). */
const INHERITED =
  process.platform === 'win32'
    ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE']
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
/** Characters of stderr kept for errors. */
const STDERR_KEEP = 4096;
const STOP_WAIT_MS = 2000;

export interface StdioParams {
  command: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderrText = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private spawnError: Error | null = null;
  private tracked: { stopped(): void } | null = null;
  private readonly exited: Promise<void>;
  private markExited!: () => void;

  constructor(private readonly params: StdioParams) {
    this.exited = new Promise((resolve) => (this.markExited = resolve));
  }

  async start(): Promise<void> {
    const env: Record<string, string> = {};
    for (const k of INHERITED) {
      const v = process.env[k];
      if (v !== undefined && !v.startsWith('()')) env[k] = v;
    }
    Object.assign(env, this.params.env);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        cwd: this.params.cwd,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.once('error', (e) => {
        this.spawnError = e;
        reject(e);
        this.onerror?.(e);
        this.ended();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) this.tracked = trackServer(child.pid);
        resolve();
      });
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.ended();
      });
      child.stdin?.on('error', (e) => this.onerror?.(e));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (e) {
            this.onerror?.(e as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        this.stderrText = (this.stderrText + d).slice(-STDERR_KEEP);
      });
    });
  }

  private ended(): void {
    if (this.child === undefined) return;
    this.child = undefined;
    this.tracked?.stopped();
    this.tracked = null;
    this.markExited();
    this.onclose?.();
  }

  /** The process id while it runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** How the process ended, once it has: `exited with code 1`, `killed by SIGKILL`, or why it could not start. */
  get ending(): string | null {
    if (this.spawnError) {
      const code = (this.spawnError as NodeJS.ErrnoException).code;
      return code === 'ENOENT'
        ? `command not found: ${this.params.command}`
        : `could not be started (${this.spawnError.message})`;
    }
    if (!this.exit) return null;
    return this.exit.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
  }

  /** Resolves once the process has ended, or after `ms`. */
  settled(ms: number): Promise<void> {
    return Promise.race([this.exited, new Promise<void>((r) => setTimeout(r, ms).unref())]);
  }

  /** The last characters the process wrote to stderr. */
  get stderr(): string {
    return this.stderrText;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error('the server process is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Stop the process: stdin closed, then SIGTERM, then SIGKILL, each given a moment to take effect. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const wait = () => Promise.race([this.exited, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    await wait();
    if (this.child) child.kill('SIGTERM');
    await wait();
    if (this.child) child.kill('SIGKILL');
    await this.exited;
    this.buffer.clear();
  }
}
