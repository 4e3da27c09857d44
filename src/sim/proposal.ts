/** What the simulated analysts propose (analyst.ts for answer rules, analyst-calls.ts for call rules). */

/** One change the analyst proposes. */
export interface Proposal {
  /** The trigger the change is about. */
  token: string;
  /** The answer of the rule added, or of the rule narrowed. */
  answer: string;
  /**
   * `add`: a new mapping token → answer; `remove`: token no longer maps to answer; `compress`: the rules
   * merged, nothing learned or forgotten (analyst-budget.ts; patch mode only).
   */
  kind: 'add' | 'remove' | 'compress';
  op: 'append' | 'replace' | 'delete';
  /** For `replace` / `delete`: the exact existing line. */
  target?: string;
  /** The new line(s); "" for a `delete`. */
  content: string;
  /** The rule line of the mapping (rewrite-mode instruction). */
  rule: string;
  /** Failures of the minibatch this change addresses. */
  support: number;
  /** A call rule's call (analyst-calls.ts); its `answer` is then the call's `callKey`. */
  call?: { tool: string; args: Record<string, unknown> };
  /** A call rule moved after another (analyst-calls.ts): a replace of a block of lines. */
  reorder?: true;
}
