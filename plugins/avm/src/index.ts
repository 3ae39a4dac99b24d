export * from './model.js';
export * from './errors.js';
export * from './codec.js';
export { assetTextError } from './syntax.js';
