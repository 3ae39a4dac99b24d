/**
 * The wire limits of what consensus exchanges: the peer-to-peer codec (network/messages.ts, codec.ts)
 * refuses a message over them, and the bootstrapper and the bootstrap server (bootstrap/) keep their
 * requests and replies within them. Tests: core/test/network/codec.test.ts,
 * core/test/consensus/bootstrap/server.test.ts.
 */

/** Largest frame (the length prefix's value) a node sends or accepts: 2 MiB, the reference's. */
export const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** Most container IDs in one message (frontiers, accepted sets, chits). */
export const MAX_CONTAINER_IDS = 2_048;
/** Most containers in one Ancestors reply (it also stays under MAX_MESSAGE_BYTES). */
export const MAX_ANCESTORS = 2_048;
