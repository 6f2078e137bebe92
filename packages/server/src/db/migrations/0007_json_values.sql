-- Before 0007, PostgreSQL (not PGlite) stored JSON text bound to jsonb parameters as a JSON
-- string holding the document ("{\"a\":1}") instead of the document itself, because the
-- driver encoded it a second time (src/db/postgres.ts now passes it through). Readers coped;
-- SQL such as `data->>'x'` did not. Each such value becomes the document it holds.
update plinth.kv set value = (value #>> '{}')::jsonb where jsonb_typeof(value) = 'string';
update auth.users set data = (data #>> '{}')::jsonb where jsonb_typeof(data) = 'string';
update auth.one_time_tokens set payload = (payload #>> '{}')::jsonb where jsonb_typeof(payload) = 'string';
update plinth.outbox set payload = (payload #>> '{}')::jsonb where jsonb_typeof(payload) = 'string';
update auth.signing_keys set private_jwk = (private_jwk #>> '{}')::jsonb where jsonb_typeof(private_jwk) = 'string';
update auth.signing_keys set public_jwk = (public_jwk #>> '{}')::jsonb where jsonb_typeof(public_jwk) = 'string';
