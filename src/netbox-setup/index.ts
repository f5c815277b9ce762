export { runNetboxSetup, NetboxSetupError } from './run-netbox-setup';
export { createNodeFetch } from './netbox-api';
