/**
 * Waits for a state, never for a time: polls `probe` (every 50 ms, `tick` first when given: a
 * worker to kick) until it resolves true, and throws after `timeoutMs` naming `what`. A probe
 * that throws counts as false. Answers how long it took.
 * @example await until('three POSTs', () => receiver.accepted().length >= 3, { tick: () => t.webhooks.kick() })
 */
export async function until(
  what: string,
  probe: () => Promise<boolean> | boolean,
  options: number | { timeoutMs?: number; tick?: () => void } = {},
): Promise<number> {
  const { timeoutMs = 30_000, tick } = typeof options === 'number' ? { timeoutMs: options } : options;
  const start = Date.now();
  for (;;) {
    if (
      await Promise.resolve()
        .then(probe)
        .catch(() => false)
    )
      return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    tick?.();
    await new Promise((r) => setTimeout(r, 50));
  }
}
