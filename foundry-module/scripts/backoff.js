/**
 * Reconnection delays: exponential growth from `baseMs` by `factor`, capped at `maxMs`, with
 * "equal jitter" (half fixed, half random) so that many clients dropped at once do not knock on
 * the bridge in step. Pure; the random source is injected.
 */

/**
 * @param {{baseMs?: number, maxMs?: number, factor?: number, jitter?: number, random?: () => number}} [opts]
 *   `jitter` is the share of each delay that is random, 0 … 1.
 */
export function createBackoff({ baseMs = 500, maxMs = 30_000, factor = 2, jitter = 0.5, random = Math.random } = {}) {
  let attempt = 0;
  return {
    /** The delay before the next attempt, then count the attempt. */
    next() {
      const ceiling = Math.min(maxMs, baseMs * factor ** attempt);
      attempt += 1;
      const fixed = ceiling * (1 - jitter);
      return Math.round(fixed + ceiling * jitter * random());
    },
    /** Back to the first delay (after a successful welcome). */
    reset() {
      attempt = 0;
    },
    get attempt() {
      return attempt;
    },
  };
}
