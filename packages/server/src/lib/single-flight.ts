/**
 * A reload that runs one at a time: a call while one runs makes it run once more when it ends
 * (what changed meanwhile is read), and every caller gets the run that covers its call.
 * Overlapping loads could finish out of order and put older data back in a cache (seen on
 * PostgreSQL with the settings); a burst of calls costs at most two loads.
 * @example const reload = singleFlight(() => loadSchema(db)); await reload();
 */
export function singleFlight<T>(load: () => Promise<T>): () => Promise<T> {
  let inflight: Promise<T> | null = null;
  let again = false;
  return () => {
    if (inflight) {
      again = true;
      return inflight;
    }
    inflight = (async () => {
      try {
        let result: T;
        do {
          again = false;
          result = await load();
        } while (again);
        return result;
      } finally {
        inflight = null;
      }
    })();
    return inflight;
  };
}
