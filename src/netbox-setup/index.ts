export { runNetboxSetup, NetboxSetupError, type NetboxSetupFlags } from './run-netbox-setup';
