export * from './model.js';
export * from './errors.js';
