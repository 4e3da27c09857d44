/**
 * Run one command as a child process and measure it whole (Linux /proc): wall time from spawn to exit,
 * CPU seconds of the child and the descendants it waited for (user + system, from this process's
 * cutime/cstime once the child is reaped), and the peak resident memory of the process tree, sampled every
 * `sampleMs` (the sum of the tree's VmRSS at the sample where it was largest; `mainHwmMiB` is the child's
 * own VmHWM, its exact peak, as last read).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_S = 100; // getconf CLK_TCK on Linux

/** User + system CPU seconds of this process's reaped children so far. */
function childrenCpuS() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the state (field 3 of stat(5)); cutime and cstime are fields 16 and 17
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_S;
}

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function treeOf(pid) {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    for (const task of read(`/proc/${pids[i]}/task/${pids[i]}/children`).split(' '))
      if (task.trim()) pids.push(Number(task));
  }
  return pids;
}

const kib = (status, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);

/**
 * `start` (absolute ms, performance.timeOrigin + performance.now()) is taken just before the spawn, so a
 * server's own timestamps can be set against it.
 */
/** @param {string} command @param {string[]} args @param {{ cwd?: string, env?: NodeJS.ProcessEnv, sampleMs?: number }} [options] */
export function measureProcess(command, args, { cwd, env = process.env, sampleMs = 10 } = {}) {
  return new Promise((resolve, reject) => {
    const cpuBefore = childrenCpuS();
    const start = performance.timeOrigin + performance.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
    let peakTree = 0;
    let mainHwm = 0;
    const sample = () => {
      let sum = 0;
      for (const pid of treeOf(child.pid)) {
        const status = read(`/proc/${pid}/status`);
        sum += kib(status, 'VmRSS');
        if (pid === child.pid) mainHwm = Math.max(mainHwm, kib(status, 'VmHWM'));
      }
      peakTree = Math.max(peakTree, sum);
    };
    const timer = setInterval(sample, sampleMs);
    child.on('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
    child.on('exit', () => clearInterval(timer));
    child.on('close', (code) => {
      const end = performance.timeOrigin + performance.now();
      resolve({
        code,
        out,
        start,
        wallS: (end - start) / 1000,
        cpuS: childrenCpuS() - cpuBefore,
        peakTreeMiB: peakTree / 1024,
        mainHwmMiB: mainHwm / 1024,
      });
    });
  });
}
