/**
 * Listening to an EVM's events (`vm.evm.events`) for one run: the tracers, the transfer logs of
 * eth_simulateV1 and eth_createAccessList add their listeners with listenToEvm and remove them all
 * with the function it returns, so a listener is never left behind on a VM that is kept and reused.
 */
import type { EVMResult, InterpreterStep, Message } from '@ethereumjs/evm';
import type { VM } from '@ethereumjs/vm';

/** The EVM passes a listener of two parameters `done`, and awaits it until `done` is called. */
type Done = ((result?: unknown) => void) | undefined;

/** The events of @ethereumjs/evm's EVM, as its (unexported) EVMEvent type names them. */
export interface EvmListeners {
  readonly step?: (step: InterpreterStep, done: Done) => void;
  readonly beforeMessage?: (message: Message, done: Done) => void;
  readonly afterMessage?: (result: EVMResult, done: Done) => void;
  readonly newContract?: (event: { address: { bytes: Uint8Array } }, done: Done) => void;
}

/** Adds `listeners` to `evm`'s events; the function returned removes them. */
export function listenToEvm(evm: VM['evm'], listeners: EvmListeners): () => void {
  const events = evm.events as { on(name: string, f: unknown): unknown; off(name: string, f: unknown): unknown } | undefined;
  if (!events) throw new TypeError('the EVM has no events');
  const added = Object.entries(listeners).filter(([, f]) => f !== undefined);
  for (const [name, f] of added) events.on(name, f);
  return () => {
    for (const [name, f] of added) events.off(name, f);
  };
}
