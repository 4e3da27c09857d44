/**
 * How the simulated target routes (docs/simulated-model.md): given the skills an agent's system prompt lists
 * (`<available_skills>`, by name and description) and a `load_skill` tool, it decides whether to load a
 * skill from the overlap between the prompt and each listed description, as a model reads descriptions:
 *
 * - Terms: lowercase words of 3+ characters (or with `#`/`+`: `c#`), English stopwords and request filler
 *   ("please", "request", "mentions", …) dropped, plurals and `-ing` folded (`hangs` → `hang`,
 *   `debugging` → `debug`); a dotted name counts as its parts (`ASP.NET` → `asp`, `net`).
 * - A description's sentence reads as positive up to an exclusion marker ("not for", "do not use", "don't
 *   use", "never use", "except", "avoid"); the rest of that sentence is negative.
 * - Score of a skill = the prompt's distinct terms found in its positive text (its name counts too) minus
 *   twice those found in its negative text. The best score wins when it reaches ROUTING_THRESHOLD (two
 *   matching terms); ties go to the skill listed first. Below the threshold the model loads nothing.
 * - `routingNoise` (model.simulated.routing_noise): with that seeded probability, hashed from the request
 *   (never call order), the decision is replaced by another option (no skill, or another listed skill).
 *
 * Deterministic: the same request gives the same decision. It knows no benchmark.
 */
import { indexHash, unitHash } from './hash.ts';

export const LOAD_SKILL_TOOL_NAME = 'load_skill';
/** Matching terms a skill needs before the simulated model loads it. */
export const ROUTING_THRESHOLD = 2;
/** Weight of a prompt term found in a description's exclusion ("not for …"). */
export const EXCLUSION_WEIGHT = 2;

export interface ListedSkill {
  name: string;
  description: string;
}

const STOPWORDS = new Set(
  (
    'the and for with from into onto that this these those there here what which who whom whose when where why how ' +
    'are was were been being have has had having does did doing done can could would should will shall may might must ' +
    'not but nor yet all any some each every both few more most other such only own same than then too very just also ' +
    'about above after again against before below between during over under through until while out off once ' +
    "you your yours our ours they them their its his her him she she's it's i'm we're you're they're " +
    'get got gets getting make makes made making use uses used using want wants need needs please help thanks thank ' +
    'hi hello hey let lets know tell give look take see seem seems keep keeps kind sort way thing things something someone ' +
    'anything everything nothing one two new now still even much many lot lots really actually maybe ' +
    'request requests mention mentions mentioned ask asks asked question questions user users task tasks skill skills ' +
    'when whenever it its this that them why because since able via per etc e.g i.e ' +
    'include includes including like likes able around across along among instead without within whether either neither ' +
    "don't doesn't didn't can't isn't aren't wasn't won't wouldn't shouldn't couldn't i've we've"
  ).split(/\s+/),
);

/** Fold a word to its routing term (plural and -ing removed, doubled final consonant collapsed). */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 4 && /(?:ss|x|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 6 && w.endsWith('ing')) {
    w = w.slice(0, -3);
    if (/([b-df-hj-np-tv-z])\1$/.test(w)) w = w.slice(0, -1);
  }
  return w;
}

const WORD_RE = /[a-z0-9][a-z0-9+#._'-]*/gi;

/** Each routing term of a text with its first spelling there (original case), in first-occurrence order. */
export function routingTermForms(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const add = (raw: string) => {
    const form = raw.replace(/^[._'-]+|[._'-]+$/g, '');
    const w = form.toLowerCase();
    if (w.length < 3 && !/[#+]/.test(w)) return;
    if (STOPWORDS.has(w) || /^\d+$/.test(w)) return;
    const term = stem(w);
    if (STOPWORDS.has(term)) return;
    if (!out.has(term)) out.set(term, form);
  };
  for (const m of text.matchAll(WORD_RE)) {
    const word = m[0].replace(/'s$/i, '').replace(/^[._'-]+|[._'-]+$/g, '');
    // a dotted name counts as its parts (`ASP.NET` → asp, net); other compounds (`TIME_WAIT`) as a whole
    if (word.includes('.')) for (const part of word.split('.')) add(part);
    else add(word);
  }
  return out;
}

/** The distinct routing terms of a text, in first-occurrence order. */
export function routingTerms(text: string): string[] {
  return [...routingTermForms(text).keys()];
}

const EXCLUSION_RE = /\b(?:not for|not intended for|do not use|don't use|never use|except|avoid)\b/i;

/** A description's positive and negative (exclusion) terms. */
export function descriptionTerms(description: string, name = ''): { pos: Set<string>; neg: Set<string> } {
  const pos = new Set<string>(name ? routingTerms(name.replace(/-/g, ' ')) : []);
  const neg = new Set<string>();
  for (const sentence of description.split(/(?<=[.;!?])\s+/)) {
    const m = EXCLUSION_RE.exec(sentence);
    const head = m ? sentence.slice(0, m.index) : sentence;
    for (const t of routingTerms(head)) pos.add(t);
    if (m) for (const t of routingTerms(sentence.slice(m.index + m[0].length))) neg.add(t);
  }
  for (const t of neg) pos.delete(t);
  return { pos, neg };
}

export interface RouteScore {
  name: string;
  score: number;
  /** Prompt terms found in the positive part of the description. */
  matched: string[];
  /** Prompt terms found in its exclusions. */
  excluded: string[];
}

/** Every listed skill's score for a prompt, in listing order. */
export function routeScores(prompt: string, skills: readonly ListedSkill[]): RouteScore[] {
  const terms = routingTerms(prompt);
  return skills.map((s) => {
    const { pos, neg } = descriptionTerms(s.description, s.name);
    const matched = terms.filter((t) => pos.has(t));
    const excluded = terms.filter((t) => neg.has(t));
    return { name: s.name, score: matched.length - EXCLUSION_WEIGHT * excluded.length, matched, excluded };
  });
}

/** The skill the simulated model loads for a prompt (null: none), before noise. */
export function routeSkill(prompt: string, skills: readonly ListedSkill[]): string | null {
  let best: RouteScore | null = null;
  for (const s of routeScores(prompt, skills)) if (!best || s.score > best.score) best = s;
  return best && best.score >= ROUTING_THRESHOLD ? best.name : null;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** The skills listed in an `<available_skills>` block of a system prompt (null when there is none). */
export function parseAvailableSkills(system: string): ListedSkill[] | null {
  const block = /<available_skills>([\s\S]*?)<\/available_skills>/.exec(system);
  if (!block) return null;
  const skills: ListedSkill[] = [];
  for (const m of block[1]!.matchAll(/<skill>([\s\S]*?)<\/skill>/g)) {
    const name = /<name>([\s\S]*?)<\/name>/.exec(m[1]!)?.[1];
    const description = /<description>([\s\S]*?)<\/description>/.exec(m[1]!)?.[1];
    if (name !== undefined)
      skills.push({ name: unescapeXml(name.trim()), description: unescapeXml((description ?? '').trim()) });
  }
  return skills;
}

export interface RoutingRequest {
  messages: ReadonlyArray<{ role: string; content: string }>;
  tools: unknown;
}

/** Whether a request offers the `load_skill` function among its tools. */
export function offersLoadSkill(tools: unknown): boolean {
  return (
    Array.isArray(tools) &&
    tools.some((t) => (t as { function?: { name?: unknown } } | null)?.function?.name === LOAD_SKILL_TOOL_NAME)
  );
}

/**
 * The routing decision of a request, or undefined when the request is not a routing turn (no `load_skill`
 * tool, no listed skills, or a skill was already loaded: then the target answers). `null` = load none.
 */
export function simulateRouting(
  req: RoutingRequest,
  lastUser: string,
  opts: { seed: number; model: string; routingNoise: number; sample?: number },
): string | null | undefined {
  if (!offersLoadSkill(req.tools) || req.messages.some((m) => m.role === 'tool')) return undefined;
  const system = req.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => m.content)
    .join('\n');
  const skills = parseAvailableSkills(system);
  if (!skills || skills.length === 0) return undefined;
  const chosen = routeSkill(lastUser, skills);
  if (opts.routingNoise > 0) {
    const draw =
      opts.sample === undefined
        ? [opts.seed, opts.model, req.messages]
        : [opts.seed, opts.model, req.messages, opts.sample];
    if (unitHash([...draw, 'routing-noise']) < opts.routingNoise) {
      const others = [null, ...skills.map((s) => s.name)].filter((o) => o !== chosen);
      return others[indexHash([...draw, 'routing-noise-pick'], others.length)]!;
    }
  }
  return chosen;
}
