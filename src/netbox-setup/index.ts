export { runNetboxSetup, NetboxSetupError } from './run-netbox-setup';
