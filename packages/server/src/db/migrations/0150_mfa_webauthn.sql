-- WebAuthn second factors (auth/mfa, docs/securing-accounts.md): a factor of type `webauthn`
-- holds one credential (a security key or a platform authenticator, not discoverable: it is
-- no sign-in by itself, unlike auth.passkeys), set by the factor's first verification; its
-- signature counter must grow. A challenge of such a factor keeps the WebAuthn challenge the
-- authenticator signs.
alter table auth.mfa_factors drop constraint if exists mfa_factors_factor_type_check;
alter table auth.mfa_factors add constraint mfa_factors_factor_type_check check (factor_type in ('totp', 'webauthn'));
alter table auth.mfa_factors alter column secret drop not null;
alter table auth.mfa_factors add column if not exists credential_id text unique; -- base64url
alter table auth.mfa_factors add column if not exists public_key text;           -- base64url of the COSE key
alter table auth.mfa_factors add column if not exists counter bigint;
alter table auth.mfa_factors add column if not exists transports jsonb;
alter table auth.mfa_challenges add column if not exists webauthn_challenge text;
