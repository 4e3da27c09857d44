/**
 * Prices and what a use of a model cost (docs/accounting.md#cost). Prices come from `model.pricing` only:
 * there is no built-in table (prices change, and a stale guess is worse than none), so an unpriced model's
 * cost is null and shows as "—", its tokens still counted.
 */
import type { CallUsage } from '../types.ts';

/** One model's prices per million tokens (`model.pricing.<id>`). */
export interface Price {
  input_per_mtok: number;
  /** Prompt tokens served from the endpoint's prompt cache; `input_per_mtok` when unset. */
  cached_input_per_mtok?: number;
  output_per_mtok: number;
}

export type Pricing = Readonly<Record<string, Price>>;

/** The key of `model.pricing` that prices every model without its own entry. */
export const ANY_MODEL = '*';

/** The price of a model id as sent in requests: its own entry, else `"*"`, else none. */
export function priceFor(pricing: Pricing, model: string): Price | null {
  return (
    (Object.hasOwn(pricing, model)
      ? pricing[model]
      : Object.hasOwn(pricing, ANY_MODEL)
        ? pricing[ANY_MODEL]
        : undefined) ?? null
  );
}

export interface PricedTokens {
  prompt_tokens: number | null;
  cached_prompt_tokens: number | null;
  completion_tokens: number | null;
}

/**
 * What tokens cost: uncached prompt tokens at the input price, cached ones at the cached-input price,
 * completion tokens (reasoning included: they are a part of them) at the output price. Null without a price
 * or with unknown tokens. Not rounded (money is rounded only for display).
 */
export function costOf(t: PricedTokens, price: Price | null): number | null {
  if (!price || t.prompt_tokens === null || t.completion_tokens === null) return null;
  const cached = Math.min(t.prompt_tokens, t.cached_prompt_tokens ?? 0);
  const cachedPrice = price.cached_input_per_mtok ?? price.input_per_mtok;
  return (
    ((t.prompt_tokens - cached) * price.input_per_mtok +
      cached * cachedPrice +
      t.completion_tokens * price.output_per_mtok) /
    1e6
  );
}

/** Price a case's finished usage of one role in place: its cost, and that of the part served from the model-call cache. */
export function priceUsage(u: CallUsage, price: Price | null): CallUsage {
  u.cost = costOf(u, price);
  if (u.from_cache) u.from_cache.cost = costOf(u.from_cache, price);
  return u;
}

/** Money for display: "—" when unknown; otherwise enough digits to show small per-case amounts. */
export function formatMoney(amount: number | null | undefined, currency: string): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '—';
  const abs = Math.abs(amount);
  const digits = abs === 0 ? 2 : abs >= 1 ? 2 : abs >= 0.01 ? 4 : 6;
  return `${amount.toFixed(digits)} ${currency}`;
}

/** An amount without its currency, three significant digits below 1 (a per-case cost; rounded for display only). */
export const amountShown = (x: number): string => (x === 0 ? '0' : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));
