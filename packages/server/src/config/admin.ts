import { ConfigError, type Env } from './parse.js';

/** The console's first admin from the environment (`ADMIN_EMAIL`, `ADMIN_PASSWORD`), made or updated at start. */
export type InitialAdmin = { email: string; password: string } | null;

/**
 * Both or neither; a start fails with one line naming the variable otherwise.
 * @example parseInitialAdmin({ ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'a long passphrase' })
 */
export function parseInitialAdmin(env: Env): InitialAdmin {
  const email = env.ADMIN_EMAIL?.trim();
  const password = env.ADMIN_PASSWORD;
  if (!email && !password) return null;
  if (!email || !password) throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD go together; set both, or neither');
  const n = [...password].length;
  if (n < 12 || n > 128) throw new ConfigError('ADMIN_PASSWORD must be 12 to 128 characters long');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new ConfigError(`ADMIN_EMAIL is not an email address: "${email.slice(0, 100)}"`);
  return { email, password };
}
