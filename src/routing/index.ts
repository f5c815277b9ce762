export { SOURCE_NAME_PATTERN, isTimeZone, RoutesFileSchema, OwnersTo, type Route, type Condition, type OwnerSpec } from './routes-schema';
export { parseDigestSchedule, type DigestSchedule } from './digest-schedule';
export {
  parseRoutesFile,
  parseYamlListFile,
  readYamlListFile,
  buildDefaultRoute,
  buildNoticeRecipients,
  RoutesFileError,
  DEFAULT_ROUTE_NAME,
} from './load-routes';
export { buildReportFacts, planRoutes, matchCondition, type SourceFacts, type ReportFacts } from './plan-routes';
export { buildOwnerGroups, MAX_OWNER_RECIPIENTS } from './build-owner-groups';
export { parseContactAddress } from './parse-contact-address';
export { createRoutePlanner, type PlannedReport, type RoutePlanner } from './create-route-planner';
