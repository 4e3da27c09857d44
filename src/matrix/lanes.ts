/**
 * Lanes: the Vitest instances a matrix run's cells run on. Each lane is a Vitest instance of this process
 * with a host of its own (vitest/host.ts laneHost) over the run's one model gateway, model-call cache and
 * simulated server, so the cells of every lane share the gateway's limits per endpoint and the cache. A
 * lane runs one cell at a time; several lanes run cells at once. A lane is opened when a cell needs it, and
 * its Vitest instance and warm threads serve its next cells.
 */
import { redactConfig } from '../config/redact.ts';
import type { ResolvedRoles } from '../config/roles.ts';
import type { SkillOptConfig } from '../config/schema.ts';
import type { CaseRecord } from '../types.ts';
import { laneHost, type SessionHost } from '../vitest/host.ts';
import { SuiteRunner } from '../vitest/runner.ts';
import type { MatrixCell } from './cells.ts';

export interface Lane {
  index: number;
  host: SessionHost;
  runner: SuiteRunner;
}

export interface LanePoolOptions {
  /** Lanes at most: cells that run at once. */
  size: number;
  /** Vitest file filters (default: the suite env.name names). */
  filters?: string[];
}

export class LanePool {
  private readonly lanes: Promise<Lane>[] = [];

  constructor(
    private readonly main: SessionHost,
    private readonly opts: LanePoolOptions,
  ) {}

  /** Lane `i`, opened on first use. */
  lane(i: number): Promise<Lane> {
    return (this.lanes[i] ??= (async () => {
      const host = laneHost(this.main);
      const runner = await SuiteRunner.open({
        host,
        ...(this.opts.filters?.length ? { filters: this.opts.filters } : {}),
      });
      return { index: i, host, runner };
    })());
  }

  /**
   * Run `fn` on every item, at most `size` at once, each on a lane of its own while it runs. After the
   * first failure no item starts; the others finish, then the failure is thrown.
   */
  async each<T>(items: readonly T[], fn: (item: T, lane: Lane) => Promise<void>): Promise<void> {
    let next = 0;
    let failed: { error: unknown } | undefined;
    const work = async (i: number) => {
      while (!failed && next < items.length) {
        const item = items[next++]!;
        try {
          await fn(item, await this.lane(i));
        } catch (error) {
          failed ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.opts.size, items.length)) }, (_, i) => work(i)));
    if (failed) throw failed.error;
  }

  async close(): Promise<void> {
    const opened = await Promise.allSettled(this.lanes);
    for (const r of opened) {
      if (r.status !== 'fulfilled') continue;
      await r.value.runner.close();
      await r.value.host.close();
    }
  }
}

/** Make `lane` run `cell`: its config and roles in the session the suites read, its folder's kept rows. */
export function useCell(
  lane: Lane,
  cell: MatrixCell,
  roles: ResolvedRoles,
  kept: Record<string, CaseRecord[]> | null,
): void {
  useModel(lane, cell.model.config, roles, { outDir: cell.path, kept });
}

/**
 * Make `lane` run a model's cases: its config (models.ts `modelConfig`) and roles in the session the suites
 * read. `outDir`: where the reporter writes (null: the caller writes the rows, as an optimize run's
 * rollouts do); `kept`: rows of an earlier run the suites reuse.
 */
export function useModel(
  lane: Lane,
  config: SkillOptConfig,
  roles: ResolvedRoles,
  o: { outDir: string | null; kept: Record<string, CaseRecord[]> | null },
): void {
  const host = lane.host;
  host.roles = roles;
  host.outDir = o.outDir;
  host.session = {
    ...host.session,
    config: redactConfig(config),
    roles: { target: roles.target, judge: roles.judge },
    simulated: roles.target.backend === 'simulated',
    skills: {},
    kept: o.kept,
  };
}
