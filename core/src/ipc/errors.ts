import { NodeError } from '@cornice/sdk';

export type IpcErrorCode =
  /** The alias or ID names no chain (`there is no ID with alias <a>`). */
  | 'UnknownChain'
  /** unpublish of a chain that is not published (`blockchainID not publishing: <id>`). */
  | 'NotPublishing'
  /** Another live process listens on the socket path. */
  | 'SocketInUse'
  /** The socket could not be created (path too long, permissions, not a socket…). */
  | 'Listen'
  /** The publisher was closed. */
  | 'Closed';

/** IPC publishing failures. */
export class IpcError extends NodeError<IpcErrorCode> {}
