/**
 * `plinth status [-o env | --output env|json]`: what `supabase status` prints, for the project
 * here: the API URL (the running server's, else where a start would serve), the database URL
 * where there is one (PostgreSQL, without its password), and the keys: for a Supabase CLI
 * project folder its JWT secret, anon and service_role keys and, on loopback, the publishable
 * and secret keys; for a Plinth project its public and secret keys.
 */
import { type Config, databaseWhere } from '../config/index.js';
import { type Args, flagValue, UsageError } from './args.js';
import type { CommandContext } from './context.js';
import { projectKeys, serverOf } from './running.js';

const FORMATS = ['pretty', 'env', 'json'];

/** `-o env` (Supabase's spelling) or `--output env`. */
function formatOf(args: Args): string {
  const [a, b] = args.positional;
  const value = a === '-o' ? b : flagValue(args, 'output');
  if (a !== undefined && a !== '-o') throw new UsageError(`plinth status takes no "${a}"; it takes -o env|json or --output env|json`);
  if (a === '-o' && b === undefined) throw new UsageError('-o takes a format: env, json or pretty');
  return value ?? 'pretty';
}

export function check(args: Args): void {
  const format = formatOf(args);
  if (!FORMATS.includes(format)) throw new UsageError(`plinth status prints ${FORMATS.join(', ')}, not "${format}"`);
}

/** The status lines, as [env name, label, value], in `supabase status`'s order. */
export async function statusOf(config: Config): Promise<Array<[string, string, string]>> {
  const running = serverOf(config);
  const apiUrl = running?.url ?? `http://127.0.0.1:${config.port}`;
  const rows: Array<[string, string, string]> = [['API_URL', 'API URL', apiUrl]];
  if (config.databaseUrl) rows.push(['DB_URL', 'DB URL', `postgresql://${databaseWhere(config.databaseUrl)}`]);
  const supabase = config.project?.supabase?.settings;
  if (supabase) {
    const { isLoopbackHost, supabaseKeysOf, SUPABASE_LOCAL_PUBLISHABLE_KEY, SUPABASE_LOCAL_SECRET_KEY } = await import('../http/index.js');
    const keys = await supabaseKeysOf(supabase.auth.jwt_secret);
    rows.push(
      ['JWT_SECRET', 'JWT secret', supabase.auth.jwt_secret],
      ['ANON_KEY', 'anon key', keys.anon],
      ['SERVICE_ROLE_KEY', 'service_role key', keys.service_role],
    );
    if (isLoopbackHost(config.host))
      rows.push(
        ['PUBLISHABLE_KEY', 'Publishable key', SUPABASE_LOCAL_PUBLISHABLE_KEY],
        ['SECRET_KEY', 'Secret key', SUPABASE_LOCAL_SECRET_KEY],
      );
    return rows;
  }
  const keys = await projectKeys(config);
  rows.push(['PUBLIC_KEY', 'Public key', keys.publicKey], ['SECRET_KEY', 'Secret key', keys.secretKey]);
  return rows;
}

export async function run({ args, config }: CommandContext): Promise<void> {
  const rows = await statusOf(config);
  const format = formatOf(args);
  if (format === 'env') process.stdout.write(rows.map(([k, , v]) => `${k}="${v}"\n`).join(''));
  else if (format === 'json') process.stdout.write(`${JSON.stringify(Object.fromEntries(rows.map(([k, , v]) => [k, v])), null, 2)}\n`);
  else {
    const width = Math.max(...rows.map(([, label]) => label.length));
    const state = serverOf(config) ? '' : config.databaseUrl ? '' : '(no server running on this data dir)\n';
    process.stdout.write(`${state}${rows.map(([, label, v]) => `${label.padStart(width)}: ${v}\n`).join('')}`);
  }
}
