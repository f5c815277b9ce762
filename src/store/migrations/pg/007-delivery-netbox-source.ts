/**
 * PostgreSQL migration 007 (mirrors SQLite migration 7), issue 18: the NetBox source that posted each
 * delivery; every row stored before belongs to the default source. A constant default is a catalogue
 * change only (PostgreSQL ≥ 11): no table rewrite, a brief lock.
 */
export const MIGRATION_007_DELIVERY_NETBOX_SOURCE = {
  version: 7,
  name: 'delivery_netbox_source',
  sql: `ALTER TABLE deliveries ADD COLUMN netbox_source TEXT NOT NULL DEFAULT 'default';`,
} as const;
