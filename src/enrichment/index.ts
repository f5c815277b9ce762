export {
  enrichReport,
  buildFailedResultsPath,
  RESULTS_PAGE_SIZE,
  type Enrichment,
  type EnrichmentMissingCode,
  type EnrichReportOptions,
} from './enrich-report';
export {
  createFailureSummarizer,
  FIRST_RESULTS_PER_TEST,
  type FailureSummary,
  type FailureSummarizer,
  type FailingResult,
  type FailingTest,
  type DeviceFailures,
} from './summarize-failures';
export { buildFailuresCsv, type FailuresCsv } from './build-failures-csv';
export {
  createOwnerResolver,
  type OwnerResolverOptions,
  type OwnerDirectory,
  type OwnerLookup,
  type OwnerContact,
  type OwnerQuery,
} from './resolve-owners';
export {
  readPassedPairs,
  buildPassedPath,
  buildResultsUrlOf,
  IDS_PER_REQUEST,
  type PairToAsk,
  type PassedPairs,
} from './read-passed-pairs';
export { readPairStates, type ReadPairStatesOptions } from './read-pair-states';
