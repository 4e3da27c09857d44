/** The simulated world's knobs: the server's defaults are the config's (the realistic world), validated one by one. */
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.ts';
import { DEFAULT_SIM_KNOBS, knobsFromConfig, PLAIN_SIM_KNOBS, resolveKnobs } from '../../src/sim/knobs.ts';
import { resolveSimConfig } from '../../src/sim/dispatch.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { SkillOptError } from '../../src/util/errors.ts';

describe('simulated world knobs', () => {
  it('a server started without options runs the world config model.simulated describes by default', () => {
    const fromConfig = knobsFromConfig(defaultConfig().model.simulated);
    expect(fromConfig).toEqual(DEFAULT_SIM_KNOBS);
    expect(resolveSimConfig({})).toEqual({ models: [], ...DEFAULT_SIM_KNOBS });
    // every config key but latency is a knob
    expect(Object.keys(defaultConfig().model.simulated).filter((k) => k !== 'latency_ms')).toHaveLength(
      Object.keys(DEFAULT_SIM_KNOBS).length,
    );
  });

  it('the default world has every mechanism on; the plain world has them off', () => {
    for (const k of [
      'noise',
      'interference',
      'dilution',
      'analystErrorRate',
      'analystMisreadRate',
      'analystNotesEffect',
    ] as const) {
      expect(DEFAULT_SIM_KNOBS[k]).toBeGreaterThan(0);
      expect(PLAIN_SIM_KNOBS[k]).toBe(0);
    }
    expect(DEFAULT_SIM_KNOBS.rankerAccuracy).toBeLessThan(1);
    expect(PLAIN_SIM_KNOBS.rankerAccuracy).toBe(1);
    expect(PLAIN_SIM_KNOBS.analystContextRecall).toBe(1);
  });

  it('rejects a bad knob with a one-line error naming it', () => {
    expect(() => resolveKnobs({ interference: 1.5 })).toThrow(/interference must be a number between 0 and 1, got 1.5/);
    expect(() => resolveKnobs({ dilutionRules: 2.5 })).toThrow(/dilutionRules must be a non-negative integer/);
    expect(() => resolveKnobs({ dilution: -1 })).toThrow(SkillOptError);
    expect(() => resolveKnobs({ rankerAccuracy: Number.NaN })).toThrow(/rankerAccuracy/);
  });

  it('the banner lists the knobs that differ from the default world', async () => {
    const s = await startSimServer({ seed: 4, interference: 0, rankerAccuracy: 1 });
    try {
      expect(s.banner).toMatch(/\(model any, seed 4, interference 0, rankerAccuracy 1\)$/);
    } finally {
      await s.close();
    }
  });
});
