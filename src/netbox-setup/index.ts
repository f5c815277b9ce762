export {
  runNetboxSetup,
  NetboxSetupError,
  type NetboxSetupOptions,
  type NetboxSetupIo,
  type NetboxSetupResult,
  type SetupAction,
} from './run-netbox-setup';
export { createNetboxApi, NetboxApiError, type NetboxApi, type FetchLike } from './netbox-api';
export {
  parseNetboxVersion,
  selectSetupForm,
  buildWebhookFields,
  buildEventRuleFields,
  diffFields,
  REPORT_OBJECT_TYPE,
  type SetupForm,
  type NetboxVersion,
} from './plan-setup';
export { createNodeFetch } from './request-json';
