import { useEffect, useState } from 'react';
import { type CallSetup, dryRun, type Job, type Sent } from './tryit';

/** How long the builder waits after an edit before building the request again (one dry run per pause in typing). */
const SETTLE_MS = 120;

/**
 * The request the builder would send now, built by a dry run (`dryRun`: the SDK's own calls,
 * answered in the browser) after each edit, so its snippets are there before anything is sent.
 * `job` is what the builder's fields make (or why they make nothing yet); `key` changes with them.
 *
 * @example
 * const preview = usePreview(setup, jobOf(draft), JSON.stringify(draft));
 * preview.sent && snippetsOf(preview.sent, setup, false);
 */
export function usePreview(setup: CallSetup | null, job: Job | { error: string } | null, key: string) {
  const [state, setState] = useState<{ sent: Sent | null; error: string | null }>({ sent: null, error: null });
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the job's content (the job is a new object every render)
  useEffect(() => {
    if (!setup || !job) return;
    if ('error' in job) {
      setState({ sent: null, error: job.error });
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      void dryRun(setup, job).then((r) => {
        if (live) setState('error' in r ? { sent: null, error: r.error } : { sent: r, error: null });
      });
    }, SETTLE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key, setup]);
  return state;
}
