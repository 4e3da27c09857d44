/**
 * The session: what the main process (CLI or plugin) hands to the skill suites running in Vitest workers,
 * through Vitest's provide/inject. Plain JSON, no secrets: the config is redacted (config/redact.ts), and API
 * keys stay in the environment, read by name where the calls are made (the host's model gateway, or a forked
 * worker). A role's base URL is passed as configured, since a forked worker calls it.
 */
import type { SkillOptConfig } from '../config/schema.ts';
import type { GatewayAddress } from '../model/gateway/protocol.ts';
import type { RoleConfig } from '../model/types.ts';
import type { CaseRecord, SplitSelector } from '../types.ts';

export interface SkillOverride {
  /** The skill text under test. */
  text: string;
  /** Where it came from (for reports). */
  path: string;
}

export interface ProvidedSession {
  /**
   * `test`: cases assert (a miss fails the case unless a suite gate is configured) and the gate case runs.
   * `rollout`: cases only record scores (the optimizer and `skillopt eval` read them); no gate case.
   * `manifest`: no cases; one `manifest` test records the suite's splits and seed skill for the optimizer.
   */
  mode: 'test' | 'rollout' | 'manifest';
  /** Changes on every in-process rerun, so suites never mix results of two runs. */
  runId: string;
  split: SplitSelector;
  /** Rollout mode: run exactly these task ids (in this order); null = every task of `split`. */
  ids: string[] | null;
  /** Rollout mode: run these trial indices of every task instead of env.trials' (the optimizer's gate samples uncertain cases again). */
  samples?: number[] | null;
  /**
   * `skillopt test -t <pattern>`: run the tasks whose full name (`<suite> <id>`) matches, as Vitest's
   * `-t` would, but decided by the suite so its gate still runs on what was selected.
   */
  namePattern?: string | null;
  /** `--shard=i/n`: this process runs part i of n of every suite's selected tasks (skillopt's own task-level split). */
  shard?: ShardSpec | null;
  /** The run's output folder (`env.out_root`, resolved): a suite's MCP workspaces go under it (docs/agents.md#mcp). */
  runDir?: string | null;
  /** Skill under test per suite name; `*` applies to every suite. Absent → the suite's seed skill. */
  skills: Record<string, SkillOverride>;
  config: SkillOptConfig;
  roles: { target: RoleConfig; judge: RoleConfig };
  simulated: boolean;
  /**
   * The host's model gateway. Suites in worker threads of the host's process send their model calls
   * there; elsewhere (a `forks` pool) they make them with clients of their own.
   */
  gateway: GatewayAddress | null;
  /** `env.max_cost` applies: each case asks the gateway before it starts (docs/accounting.md#budgets). */
  budgeted?: boolean;
  /**
   * `skillopt test` rerun into a folder whose run the budget stopped: the rows it scored, by
   * `<suite>\u0000<id>`; a case with its rows here (same skill, every trial) is not run again.
   */
  kept?: Record<string, CaseRecord[]> | null;
}

export interface ShardSpec {
  /** 1-based. */
  index: number;
  count: number;
}

/** What a suite selected to run, recorded at collection so the reporter can judge a filtered run. */
export interface SuiteSelection {
  suite: string;
  /** Tasks in the dataset. */
  total: number;
  /** Tasks this run selected (after split, limit, name filter, shard). */
  selected: number;
  /** How the selection was narrowed, for reports: `split test`, `env.limit 20`, `-t dnd-01`, `shard 1/2`. */
  filters: string[];
  /** The suite's gate when it is active in this run (test mode), else null. */
  gate: GateThresholds | null;
  /** The shard this selection belongs to (merged reports add shards up). */
  shard: ShardSpec | null;
  /** Errored cases the verdict tolerates (evaluation.max_errored). */
  max_errored: number;
  /** `test` mode without a gate: a miss fails its case. */
  misses_fail: boolean;
  /** Where the suite is declared (`path:line:column` of its defineSkillSuite call), for annotations. */
  site?: string | null;
  /** The skill under test's size in tokens, estimated as characters / 4 (src/cost/run-cost.ts skillTokens). */
  skill_tokens?: number;
  /** `model.currency`: the unit of the cases' `usage.cost`. */
  currency?: string;
}

declare module 'vitest' {
  interface ProvidedContext {
    skillopt: ProvidedSession;
  }
  interface TaskMeta {
    skillopt?: CaseRecord;
    /** With env.trials > 1: every trial's row (`skillopt` is trial 0's). */
    skilloptTrials?: CaseRecord[];
    /** A case `env.max_cost` did not let start: why (one line). */
    skilloptNotRun?: string;
    skilloptGate?: GateVerdict;
    skilloptManifest?: SuiteManifest;
    /** On a suite's describe block. */
    skilloptSuite?: SuiteSelection;
    /** On the skipped marker of a suite that env.name did not select. */
    skilloptOtherSuite?: string;
    /** On the skipped marker of a suite whose tasks `skillopt test -t` matched none of. */
    skilloptUnmatched?: UnmatchedPattern;
  }
}

/** A `-t` pattern that selected no task of a suite: what it was tried on, for the run's one-line error. */
export interface UnmatchedPattern {
  suite: string;
  pattern: string;
  /** Tasks of the split (after env.limit) the pattern was matched against. */
  tasks: number;
  /** The split and limit it was tried within (`split test`, `env.limit 20`). */
  filters: string[];
  /** A name that would match a task, to show the form names take (`mini mini-001`); null for an empty split. */
  example: string | null;
}

export interface GateThresholds {
  minPassRate: number;
  minMeanHard: number;
  minMeanSoft: number;
  /** Cost gates (docs/ci.md "Gates on cost"; 0 or absent = off): mean tokens per scored case at most this. */
  maxMeanTokens?: number;
  /** Mean cost per scored case at most this, in `model.currency` (needs `model.pricing`). */
  maxMeanCost?: number;
  /** The 95th percentile of the scored cases' latency (ms) at most this. */
  maxP95LatencyMs?: number;
}

/** What a cost gate measured (suite/cost-gate.ts), present when a cost threshold is on. */
export interface GateMeasured {
  /** Mean prompt + completion tokens (target and judge) per scored case; null when no case reported usage. */
  mean_tokens: number | null;
  /** Scored cases left out of mean_tokens: a reply without usage. */
  cases_without_tokens: number;
  /** Mean cost per scored case; null when no case has a cost (no price, or tokens unknown). */
  mean_cost: number | null;
  cases_without_cost: number;
  /** p95 of the scored trials' latency_ms (type-7 quantile); null when nothing was scored. */
  p95_latency_ms: number | null;
}

export interface GateVerdict {
  suite: string;
  ok: boolean;
  thresholds: GateThresholds;
  reasons: string[];
  /** The cost gates' measured values, when one is on. */
  measured?: GateMeasured;
}

/** What a suite tells the optimizer about itself (recorded by the `manifest` test). */
export interface SuiteManifest {
  suite: string;
  /** The dataset, as named in errors and reports. */
  dataset: string;
  seed_skill: { path: string; text: string };
  /** Task ids per split, after `env.limit`, in split order. */
  splits: { train: string[]; val: string[]; test: string[] };
  task_types: Record<string, string | null>;
  /** Each task's expected answer when it is a short string (a label), else null: the optimizer checks that val covers the labels. */
  labels?: Record<string, string | null>;
  /** Trigger suites: the skill whose description `--optimize` rewrites, and every listed skill. */
  trigger?: TriggerManifest;
  /** Where the suite is declared (`path:line:column` of its defineSkillSuite call). */
  site?: string | null;
}

/** What a trigger suite tells the optimizer: the optimized skill (its seed is `seed_skill`) and the fixed others. */
export interface TriggerManifest {
  optimize: string;
  skills: Array<{ name: string; description: string; path: string }>;
}

/** Set in the environment while a session host is open, so a suite that finds no session can blame the missing plugin. */
export const HOST_ENV_FLAG = 'SKILLOPT_SESSION_HOST';

/** Set by the warm pool's thread (warm-worker.ts) to the request it is serving, `run` or `collect`; the suites' head start reads it. */
export const WORKER_REQUEST = Symbol.for('skillopt.worker-request');
