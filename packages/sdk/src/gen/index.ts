/**
 * `@plinth/sdk/gen`: the `Database` type of a project, for `createClient<Database>()`, from an
 * OpenAPI document (`generateTypes`) or from a running server (`generateTypesFromServer`).
 */
export { generateTypes, tsType } from './types.js';
export { generateTypesFromServer, type ServerTypesOptions } from './server.js';
