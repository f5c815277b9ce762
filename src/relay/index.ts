export { createRelay, type Relay } from './create-relay';
export {
  createRelayDigestComposer,
  createRelayReportComposer,
  createRelayWaiverBook,
  createSourceNetboxClient,
  findDeliverySource,
} from './delivery-pipeline';
