import type { CommandContext } from './context.js';

const ENVIRONMENT = `Environment (also read from the project's .env): PORT, PUBLIC_URL, DATA_DIR, DATABASE_URL, WORKERS,
MIGRATIONS_DIR, LOG_LEVEL, PLINTH_PUBLIC_KEY, PLINTH_SECRET_KEY, SMTP_URL, SMS_PROVIDER, REDIS_URL…
README.md has them all. Every command but init and help acts on the project whose plinth.json is
in this folder or above (or on --data-dir D, or DATABASE_URL), and names it first.`;

/** `plinth help`: the command table's lines. */
export async function run(_context: CommandContext): Promise<void> {
  const { COMMANDS } = await import('./commands.js');
  const rows = Object.entries(COMMANDS).map(([name, c]) => [name === c.help[0].split(' ')[0] ? c.help[0] : name, c.help[1]]);
  const width = Math.max(...rows.map(([s]) => s.length)) + 2;
  const lines = rows.map(([synopsis, what]) =>
    synopsis.length + 2 > 56
      ? `  ${synopsis}\n  ${' '.repeat(Math.min(width, 56))}${what}`
      : `  ${synopsis.padEnd(Math.min(width, 56))}${what}`,
  );
  process.stdout.write(
    `Usage: plinth <command> [options]   (--data-dir D on any command names a data dir)\nCommands:\n${lines.join('\n')}\n${ENVIRONMENT}\n`,
  );
}
