export { createRelay, type Relay } from './create-relay';
export {
  createRelayDigestComposer,
  createRelayNetboxClients,
  createRelayReportComposer,
  createRelayWaiverBook,
  createSourceNetboxClient,
  findDeliverySource,
} from './delivery-pipeline';
