export { createApp, type AppDeps } from './create-app';
export { createWebhookRouter, STORAGE_RETRY_AFTER_SECONDS, type WebhookRouteOptions } from './webhook-route';
export { createErrorHandler, toRelayError, notFound } from './error-handler';
export { createAdminRouter, ADMIN_MAX_LIMIT, type AdminRouteOptions } from './admin-route';
export { createWebhookGuards, isAllowed, type WebhookGuardOptions } from './webhook-guards';
export { createObserveRouter, type ObserveRoutesOptions } from './observe-routes';
export { createRequestLogger } from './request-log';
export { verifyBearerToken } from './bearer-token';
export { createWaiversRouter, parseWaiverQuery, type WaiversRouteOptions } from './waivers-route';
export { createAdminGuard } from './admin-guard';
export {
  buildDeliveriesJson,
  buildDeliveryJson,
  buildEmlFileName,
  buildSentMailsJson,
  findMessageId,
  type DeliveryJson,
  type DeliveryRouteJson,
  type SentMailJson,
} from './build-delivery-json';
