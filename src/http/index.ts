export { createApp } from './create-app';
export { createWebhookRouter } from './webhook-route';
export { buildDeliveriesJson, buildEmlFileName, findMessageId, readHeaderBlock, type DeliveryJson } from './build-delivery-json';
export { parseListFilters, buildFilterParams, FILTER_PARAMS, type ListQuery } from './parse-list-filters';
export { recordTokenAttempt } from './admin-guard';
export { isSameSecret } from './bearer-token';
