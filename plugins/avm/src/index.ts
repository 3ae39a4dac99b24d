export * from './model.js';
export * from './errors.js';
export * from './pubsub.js';
