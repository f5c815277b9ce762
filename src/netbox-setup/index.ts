export { runNetboxSetup, NetboxSetupError } from './run-netbox-setup';
export { type FetchLike } from './netbox-api';
export { createNodeFetch } from './request-json';
