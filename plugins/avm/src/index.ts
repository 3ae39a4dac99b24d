export * from './model.js';
export * from './errors.js';
export * from './codec.js';
export { assetTextError } from './syntax.js';
export * from './genesis.js';
export * from './static-service.js';
export * from './pubsub.js';
