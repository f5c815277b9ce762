export {
  createNetboxClient,
  buildAuthorization,
  MAX_PAGE_KEPT_BYTES,
  type NetboxClient,
  type NetboxClientOptions,
  type RequestBudget,
} from './netbox-client';
export { NetboxError, classifyNetboxStatus, describeTlsFailure, type NetboxErrorCode } from './netbox-error';
export { splitResultsUrl } from './results-url';
export { parsePageStream, PageScanner, type NetboxPage } from './parse-page-stream';
export {
  readNetboxMajor,
  listDevices,
  listOwnedDeviceIds,
  listContactAssignments,
  listContacts,
  countDeviceResults,
  type NetboxRef,
  type NetboxDevice,
  type OwnerObjectType,
  type ContactAssignment,
  type NetboxContact,
} from './read-owners';
