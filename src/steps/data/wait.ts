// Waiting for something another controller does (a snapshot becoming ready, a PVC binding), by polling: simple,
// and a step that crashes mid-wait loses nothing.
import type { StepContext } from '../context.ts';

/**
 * Polls `check` until it returns a value, then returns it. After `timeoutMs` it returns undefined; the caller
 * says what that means.
 */
export async function waitFor<T>(
  ctx: StepContext,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const deadline = ctx.now().getTime() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (ctx.now().getTime() >= deadline) return undefined;
    await ctx.sleep(ctx.settings.pollMs, ctx.signal);
  }
}
