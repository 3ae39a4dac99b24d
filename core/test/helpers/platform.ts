/**
 * A stand-in platform VM for node tests: registered under TOKENS.platformVM, it hands the test the
 * node's PlatformVMDeps (events, resolveVm, isChainRunning) and reports `atInit` at initialize, as the
 * real VM reports the chains of its state.
 */
import { defineVM, type VMFactory } from '@cornice/sdk';
import { TestVM } from '../../src/testing/simulation.js';
import type { PlatformVMDeps } from '../../src/node/container.js';
import { PLATFORM_VM_ID } from '../../src/platform/vm.js';

export function fakePlatformVM(atInit: (deps: PlatformVMDeps) => void = () => {}): { make: (deps: PlatformVMDeps) => VMFactory; deps(): PlatformVMDeps } {
  let captured: PlatformVMDeps | undefined;
  return {
    make: (deps) => {
      captured = deps;
      return defineVM({
        name: 'platformvm',
        version: '0.0.0',
        vmId: PLATFORM_VM_ID,
        create: () => {
          const vm = new TestVM();
          vm.initialize = async () => atInit(deps);
          vm.createHandlers = async () => [{ path: '', http: (_req, res) => void res.writeHead(501).end() }];
          return vm;
        },
      });
    },
    deps: () => {
      if (!captured) throw new TypeError('the node has not made the platform VM yet');
      return captured;
    },
  };
}
