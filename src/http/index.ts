export { createApp } from './create-app';
export { createWebhookRouter } from './webhook-route';
export * from './build-delivery-json';
export { parseListFilters, buildFilterParams, FILTER_PARAMS, type ListQuery } from './parse-list-filters';
export { isSameSecret, recordTokenAttempt } from './admin-guard';
