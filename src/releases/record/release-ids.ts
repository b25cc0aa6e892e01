/**
 * The release ids Glidepath makes when CI announced none, by their prefix: an Application's
 * revision (`revision-<12 hex>`, routing/route.ts) and a Kargo Freight's (`freight-<name>`,
 * routing/route-kargo.ts). The record names them here so what reads a release id (its display
 * name, Kargo follow-ups) needs no routing.
 */
export const REVISION_RELEASE_PREFIX = 'revision-';

/** Release ids of Freight nobody announced: `freight-<name>` (Freight names are content hashes). */
export const FREIGHT_RELEASE_PREFIX = 'freight-';
