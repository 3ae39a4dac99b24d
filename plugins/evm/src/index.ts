export * from './backend.js';
