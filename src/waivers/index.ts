export * from './waiver';
export { applyWaivers, type WaivablePair, type WaiverOutcome } from './apply-waivers';
export { createWaiverBook, type WaiverBook, type WaiverFilter, type WaiverStorage } from './create-waiver-book';
