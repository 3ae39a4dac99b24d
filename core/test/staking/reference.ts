// Public test vectors: the reference node's local staker certificates (RSA-4096, v1, not self-signed),
// staker 1's key, and their node IDs (the reference's local genesis validators); see fixtures/reference/README.md.
import { fileURLToPath } from 'node:url';

const REFERENCE = new URL('../../../test/staking/fixtures/reference/', import.meta.url);

/** The path of a file of the reference fixtures (`staker1.crt` … `staker5.crt`, `staker1.key`). */
export const referenceFile = (name: string): string => fileURLToPath(new URL(name, REFERENCE));

export const REFERENCE_NODE_IDS: readonly string[] = [
  '7Xhw2mDxuDS44j42TCB6U5579esbSt3Lg',
  'MFrZFVCXPv5iCn6M9K6XduxGTYp891xXZ',
  'NFBbbJ4qCmNaCzeW7sxErhvWqvEQMnYcN',
  'GWPcbFJZFfZreETSoWjPimr846mXEKCtu',
  'P7oB2McjBGgW2NXXWVYjV8JEDFoW9xDE5',
];
