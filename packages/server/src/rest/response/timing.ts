/**
 * Stage times of one request for the `Server-Timing` header (CONTRIBUTING.md convention 1).
 * @example const t = new StageTimer(); parse(); t.lap('parse'); t.header() // 'parse;dur=0.04'
 */
export class StageTimer {
  private last = performance.now();
  private out = '';

  /** Ends the current stage under `name` and starts the next one. */
  lap(name: string): void {
    const now = performance.now();
    this.out += `${this.out === '' ? '' : ', '}${name};dur=${(now - this.last).toFixed(2)}`;
    this.last = now;
  }

  header(): string {
    return this.out;
  }
}
