export * from './errors.js';
export * from './types.js';
export * from './operators.js';
export * from './urls.js';
export * from './providers.js';
export * from './messages.js';
export * from './management.js';
export * from './admins.js';
