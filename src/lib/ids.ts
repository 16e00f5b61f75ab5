import { randomUUID } from 'node:crypto';

/** Identifiers are random UUIDs: unguessable, so an ID alone reveals nothing across tenants. */
export const newId = (): string => randomUUID();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);
