/** The plugin's version (its package.json's). */
export const EVM_VM_VERSION = '0.1.0';
