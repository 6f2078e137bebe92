import type { OidcProviderSettings } from '@plinth/shared';
import type { AuthSettings, FieldProblem } from '../../../settings/index.js';
import { allowedAlgs, checkClientFit, type OidcDiscovery, OidcProblem, signingKeys } from './discovery.js';

/**
 * Everything about a provider that needs its own servers: the discovery document (reachable,
 * the same issuer, the code flow, a JWKS, an allowed algorithm, PKCE S256), the client
 * authentication method, and a key set with a key for those algorithms. Throws OidcProblem.
 * @example await inspectProvider(discovery, { issuer: 'https://sso.example.com', … });
 */
export async function inspectProvider(discovery: OidcDiscovery, conf: OidcProviderSettings) {
  const meta = await discovery.metadata(conf.issuer);
  checkClientFit(meta, conf);
  const jwks = await discovery.keys(String(meta.jwks_uri));
  if (signingKeys(jwks, allowedAlgs(meta)).length === 0) {
    throw new OidcProblem('oidc_unsupported', `its JWKS has no public key for ${allowedAlgs(meta).join(', ')}`);
  }
  return meta;
}

/** Whether the saved settings need this provider asked again: new, another issuer or method, or being turned on. */
function changed(p: OidcProviderSettings, before: readonly OidcProviderSettings[]): boolean {
  const old = before.find((o) => o.id === p.id);
  return !old || old.issuer !== p.issuer || old.token_endpoint_auth_method !== p.token_endpoint_auth_method || (p.enabled && !old.enabled);
}

/**
 * The settings check of `oidc_providers` (handed to the settings store by app.ts): each provider
 * that is new, changed its issuer or client authentication, or is being enabled is inspected
 * (in parallel); a refusal names its field and one of oidc_unreachable, oidc_issuer_mismatch,
 * oidc_unsupported. Providers left as they were are not asked, so one that is down does not
 * block saving anything else.
 * @example const settings = await createSettingsStore(db, { publicUrl, log, check: oidcSettingsCheck(discovery) });
 */
export function oidcSettingsCheck(discovery: OidcDiscovery) {
  return async (next: AuthSettings, previous: AuthSettings): Promise<FieldProblem[]> => {
    const problems = await Promise.all(
      next.oidc_providers.map(async (p, i): Promise<FieldProblem | null> => {
        if (!changed(p, previous.oidc_providers)) return null;
        try {
          await inspectProvider(discovery, p);
          return null;
        } catch (err) {
          if (!(err instanceof OidcProblem)) throw err;
          return { field: `oidc_providers[${i}].${err.field}`, message: err.message, code: err.code };
        }
      }),
    );
    return problems.filter((p): p is FieldProblem => p !== null);
  };
}
