export { createNetboxClient, type NetboxClient, type RequestBudget } from './netbox-client';
export { MAX_PAGE_KEPT_BYTES } from './parse-page-stream';
export { NetboxError, describeTlsFailure, type NetboxErrorCode } from './netbox-error';
export {
  readNetboxStatus,
  listDevices,
  listOwnedDevices,
  listContactAssignments,
  listContacts,
  countResultsPerDevice,
  buildListPath,
  chunkIds,
  readResultRefs,
  NETBOX_PAGE_SIZE,
  type ContactAssignment,
  type NetboxRef,
  type NetboxDevice,
  type OwnerObject,
  type OwnerObjectType,
} from './read-owners';
