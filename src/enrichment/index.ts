export { enrichReport, type Enrichment } from './enrich-report';
export { createFailureSummarizer, type FailureSummary } from './summarize-failures';
export { buildFailuresCsv } from './build-failures-csv';
export { createOwnerResolver, type OwnerDirectory, type OwnerLookup, type ResultCounts, type OwnerContact } from './resolve-owners';
export { readPairStates, readPassedPairs, type PairToAsk } from './read-pair-states';
