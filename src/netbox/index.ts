export { createNetboxClient, MAX_PAGE_KEPT_BYTES, type NetboxClient, type RequestBudget } from './netbox-client';
export { NetboxError, describeTlsFailure, type NetboxErrorCode } from './netbox-error';
export {
  readMajorVersions,
  listDevices,
  listOwnedDevices,
  listContactAssignments,
  listContacts,
  countResultsPerDevice,
  buildResultsPath,
  chunkIds,
  readResultRefs,
  NETBOX_PAGE_SIZE,
  type ContactAssignment,
  type NetboxRef,
  type NetboxDevice,
  type OwnerObject,
  type OwnerObjectType,
} from './read-owners';
