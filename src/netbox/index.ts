export { createNetboxClient, buildAuthorization, type NetboxClient, type NetboxClientOptions, type RequestBudget } from './netbox-client';
export { NetboxError, classifyNetboxStatus, describeTlsFailure, type NetboxErrorCode } from './netbox-error';
export { parsePageStream, PageScanner, type NetboxPage } from './parse-page-stream';
