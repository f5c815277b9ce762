export { createNetboxClient, type NetboxClient, type RequestBudget } from './netbox-client';
export { MAX_PAGE_KEPT_BYTES } from './parse-page-stream';
export { NetboxError, describeTlsFailure, type NetboxErrorCode } from './netbox-error';
export * from './read-owners';
