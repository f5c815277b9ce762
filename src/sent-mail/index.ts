export { buildRawMessage, type RawMessage } from './build-raw-message';
