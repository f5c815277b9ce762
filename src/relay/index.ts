export { createRelay, type Relay } from './create-relay';
export {
  createRelayDigestComposer,
  createRelayNetboxClients,
  createRelayReportComposer,
  createRelayWaiverBook,
  createSourceNetboxClient,
  findDeliverySource,
} from './delivery-pipeline';
/** The templates shipped with the package (defined in mail/, where the command line finds it without loading the relay). */
export { defaultTemplatesDir } from '../mail';
