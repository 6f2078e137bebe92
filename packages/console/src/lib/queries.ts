import { queryOptions } from '@tanstack/react-query';
import { api } from './api';

/**
 * The queries several pages share (the admin, the project, the keys). They live here, not in
 * `router.tsx`, so that pages and `lib/` never import the router back: the router imports the
 * pages, and everything imports this module.
 *
 * @example
 * const project = useQuery(projectQuery);
 */

export const meQuery = queryOptions({ queryKey: ['me'], queryFn: api.me, staleTime: 60_000 });
export const projectQuery = queryOptions({ queryKey: ['project'], queryFn: api.project });
/** The project keys: in TanStack Query's memory cache only (dropped at sign-out), never in storage or URLs. */
export const keysQuery = queryOptions({ queryKey: ['keys'], queryFn: api.keys, staleTime: Number.POSITIVE_INFINITY, gcTime: 10 * 60_000 });
