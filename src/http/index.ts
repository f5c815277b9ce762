export { createApp } from './create-app';
export { createWebhookRouter } from './webhook-route';
export {
  buildDeliveriesJson,
  buildEmlFileName,
  findMessageId,
  readHeaderBlock,
  sendKeptMail,
  type DeliveryJson,
} from './build-delivery-json';
export { parseListFilters, buildFilterParams, FILTER_PARAMS, type ListQuery } from './parse-list-filters';
export { isSameSecret, recordTokenAttempt } from './admin-guard';
