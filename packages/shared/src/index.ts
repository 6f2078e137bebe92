export * from './errors.js';
export * from './types.js';
export * from './operators.js';
export * from './urls.js';
