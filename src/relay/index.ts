export { createRelay } from './create-relay';
export {
  createRelayNetboxClients,
  createRelayReportComposer,
  createRelayWaiverBook,
  createSourceNetboxClient,
  findDeliverySource,
} from './delivery-pipeline';
export type { Relay } from './types';
/** The templates shipped with the package (defined in mail/, where the command line finds it without loading the relay). */
export { defaultTemplatesDir } from '../mail';
