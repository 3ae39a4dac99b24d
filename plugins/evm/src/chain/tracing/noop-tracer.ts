/** geth's noopTracer: runs the transaction and answers `{}` (any tracerConfig is ignored, as geth ignores it). */
import type { TracerFactory } from './tracer.js';

export const noopTracer: TracerFactory = () => ({
  start() {},
  finish: () => ({}),
});
