/**
 * config.json of an optimize run: the resolved config (API keys redacted) and `derived`, what the run
 * worked out from it. Readers (the report) use a few fields of each section; the rest is the config
 * schema's and passes through.
 */
import { z } from 'zod';

const section = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape).optional();

export const ResolvedConfigFileSchema = z.looseObject({
  optimizer: section({
    skill_update_mode: z.string().optional(),
    learning_rate: z.number().optional(),
    min_learning_rate: z.number().optional(),
    lr_scheduler: z.string().optional(),
    lr_control_mode: z.string().optional(),
  }),
  evaluation: section({ gate_metric: z.string().optional() }),
  // the report prices each step's stages with these (docs/accounting.md#cost)
  model: section({
    optimizer: z.string().optional(),
    target: z.string().optional(),
    judge: z.string().optional(),
    pricing: z
      .record(
        z.string(),
        z.looseObject({
          input_per_mtok: z.number(),
          cached_input_per_mtok: z.number().optional(),
          output_per_mtok: z.number(),
        }),
      )
      .optional(),
    currency: z.string().optional(),
  }),
  derived: section({
    train_size: z.number().optional(),
    val_size: z.number().optional(),
    test_size: z.number().optional(),
    steps_per_epoch: z.number().optional(),
    total_steps: z.number().optional(),
    /** The edit budget planned for each step (absent in runs written before it was recorded). */
    planned_edit_budgets: z.array(z.number()).optional(),
    config_files: z.array(z.string()).optional(),
    suite: z.string().optional(),
    dataset: z.string().optional(),
    initial_skill: z.string().optional(),
    simulated: z.boolean().optional(),
  }),
});
