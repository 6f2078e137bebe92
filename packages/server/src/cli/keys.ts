/** `plinth keys [--json]`: the project's keys, also while its server runs. */
import type { CommandContext } from './context.js';
import { projectKeys } from './running.js';

export async function run({ args, config }: CommandContext): Promise<void> {
  const keys = await projectKeys(config);
  if (args.flags.json) process.stdout.write(`${JSON.stringify({ public_key: keys.publicKey, secret_key: keys.secretKey })}\n`);
  else process.stdout.write(`public key: ${keys.publicKey}\nsecret key: ${keys.secretKey}\n`);
}
