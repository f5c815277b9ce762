export {
  WAIVER_STATUSES,
  WAIVER_EXPIRING_DAYS,
  WAIVER_NAME_MAX,
  DAY_MS,
  buildWaiverEnd,
  buildWaiverFormPath,
  buildWaiverJson,
  classifyWaiver,
  isCalendarDay,
  parseNewWaiver,
  WAIVER_MAX_DAYS_AHEAD,
  type WaiverRequest,
  type WaiverRules,
  type NewWaiver,
  type Waiver,
  type WaiverStatus,
} from './waiver';
export { applyWaivers, type WaivablePair, type WaiverOutcome } from './apply-waivers';
export { createWaiverBook, type WaiverBook, type WaiverFilter, type WaiverStorage } from './create-waiver-book';
