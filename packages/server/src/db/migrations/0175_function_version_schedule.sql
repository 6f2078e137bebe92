-- A deployed function's schedule travels with its version (src/functions/deployed.ts,
-- docs/functions.md "Deploying"): `plinth functions deploy` sends the function's config.json
-- schedule with the bundle, and the live version's schedule is the one every instance runs (a
-- rollback brings back that version's schedule). null: the version has no schedule.
alter table plinth.function_versions add column if not exists schedule text;
