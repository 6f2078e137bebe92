import type { CommandContext } from './context.js';

const ENVIRONMENT = `Environment (also read from the project's .env): PORT, PUBLIC_URL, DATA_DIR, DATABASE_URL, WORKERS,
MIGRATIONS_DIR, LOG_LEVEL, PLINTH_PUBLIC_KEY, PLINTH_SECRET_KEY, SMTP_URL, SMS_PROVIDER, REDIS_URL…
README.md has them all. Every command but init and help acts on the project whose plinth.json is
in this folder or above (or on --data-dir D, or DATABASE_URL), and names it first.`;

/** `plinth help`: the command table's lines, the synopsis above what it does when it is long. */
export async function run(_context: CommandContext): Promise<void> {
  const { COMMANDS } = await import('./commands.js');
  const WIDTH = 52;
  const lines = Object.values(COMMANDS).map(({ help: [synopsis, what] }) =>
    synopsis.length < WIDTH ? `  ${synopsis.padEnd(WIDTH)}${what}` : `  ${synopsis}\n  ${' '.repeat(WIDTH)}${what}`,
  );
  process.stdout.write(
    `Usage: plinth <command> [options]   (--data-dir D on any command names a data dir)\nCommands:\n${lines.join('\n')}\n${ENVIRONMENT}\n`,
  );
}
