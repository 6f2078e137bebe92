/** `plinth sql "<query>" [--json|--csv]`: runs SQL through the running server, or on the project's database. */
import { migrateSystem, openDatabase } from '../db/index.js';
import { type Args, UsageError } from './args.js';
import type { CommandContext } from './context.js';
import { callServer, closingAfter, serverOf } from './running.js';
import { formatCsv, formatResults, type SqlResult, sqlErrorLines } from './sql-format.js';

/** One failure, psql-like: the message naming line and column, then the line with a caret. */
function sqlFailure(message: string, query: string, position: number | null | undefined): never {
  const [first, ...context] = sqlErrorLines(message, query, position);
  process.stderr.write(`plinth: ${first}\n${context.map((l) => `${l}\n`).join('')}`);
  process.exit(1);
}

async function runSql(context: CommandContext, query: string): Promise<SqlResult[]> {
  const { config } = context;
  const server = serverOf(config);
  if (server) {
    const { status, body } = await callServer(config, server, 'POST', '/api/v1/sql', { query });
    if (status !== 200) {
      const details = body.details as { position?: number | null } | undefined;
      sqlFailure(String(body.message ?? `the server answered HTTP ${status}`), query, details?.position);
    }
    return body.results as SqlResult[];
  }
  const db = await openDatabase(config);
  const results = await closingAfter(
    db,
    async () => {
      await migrateSystem(db);
      return db.script(query);
    },
    (err) => sqlFailure(err.message, query, err.position),
  );
  return results.map((r) => ({ command: r.command, rowCount: r.rowCount, columns: r.fields.map((f) => ({ name: f.name })), rows: r.rows }));
}

export function check(args: Args): void {
  if (!args.positional.join(' ').trim()) throw new UsageError('plinth sql needs a query: plinth sql "select 1"');
  if (args.flags.json && args.flags.csv) throw new UsageError('plinth sql takes --json or --csv, not both');
}

export async function run(context: CommandContext): Promise<void> {
  const { args } = context;
  const query = args.positional.join(' ').trim();
  const results = await runSql(context, query);
  if (args.flags.csv) process.stdout.write(formatCsv(results));
  else if (args.flags.json) {
    const last = [...results].reverse().find((r) => r.columns.length > 0);
    process.stdout.write(`${JSON.stringify(last?.rows ?? [])}\n`);
  } else process.stdout.write(formatResults(results));
}
