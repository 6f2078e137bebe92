/**
 * `plinth keys [--json]`: the project's keys, also while its server runs.
 * `plinth keys rotate-signing [--revoke]`: a new token-signing key, through the running embedded
 * server when there is one (it holds the database), else on the database directly; the instances
 * running on it hear of the rotation and follow (docs/security.md, "Signing keys").
 */
import type { Rotation } from '../auth/index.js';
import { type Args, UsageError } from './args.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';
import { callServer, closingAfter, projectKeys, serverOf } from './running.js';

export function check(args: Args): void {
  const [sub] = args.positional;
  if (sub !== undefined && sub !== 'rotate-signing') {
    throw new UsageError(`plinth keys takes no "${sub}"; did you mean plinth keys rotate-signing?`);
  }
  if (args.flags.revoke && sub !== 'rotate-signing') throw new UsageError('--revoke goes with plinth keys rotate-signing');
}

async function rotateSigning({ args, config }: CommandContext): Promise<void> {
  const revoke = args.flags.revoke === true;
  const server = serverOf(config);
  let rotation: Rotation;
  if (server) {
    const { status, body } = await callServer(config, server, 'POST', '/api/v1/admin/signing-keys/rotate', { revoke });
    if (status !== 200) fail(String(body.message ?? `the server answered HTTP ${status}`));
    rotation = body as unknown as Rotation;
  } else {
    const [{ migrateSystem, openDatabase }, { rotateSigningKeyOffline }, { systemClock }] = await Promise.all([
      import('../db/index.js'),
      import('../auth/index.js'),
      import('../lib/index.js'),
    ]);
    const db = await openDatabase(config);
    rotation = await closingAfter(db, async () => {
      await migrateSystem(db);
      return rotateSigningKeyOffline(db, systemClock, { revoke });
    });
  }
  const old = rotation.previous.length ? rotation.previous.join(', ') : 'none';
  process.stdout.write(
    rotation.revoked
      ? `signing key ${rotation.kid} signs from now on; the old keys (${old}) are removed: ${rotation.sessions_ended} sessions ended, every user signs in again\n`
      : `signing key ${rotation.kid} signs from now on; the old keys (${old}) stay in the JWKS until ${rotation.retire_at}\n`,
  );
}

export async function run(context: CommandContext): Promise<void> {
  const { args, config } = context;
  if (args.positional[0] === 'rotate-signing') return rotateSigning(context);
  const keys = await projectKeys(config);
  if (args.flags.json) process.stdout.write(`${JSON.stringify({ public_key: keys.publicKey, secret_key: keys.secretKey })}\n`);
  else process.stdout.write(`public key: ${keys.publicKey}\nsecret key: ${keys.secretKey}\n`);
}
