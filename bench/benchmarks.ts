import { ackUnderOutageBenchmark } from './ack-under-outage';
import { bigNetworkBenchmark } from './big-network';
import { burstBenchmark } from './burst';
import { cliFirstCallBenchmark } from './cli-first-call';
import { endToEndBenchmark } from './end-to-end';
import { enrichmentBenchmark } from './enrichment';
import { enrichmentStatesBenchmark } from './enrichment-states';
import { footprintBenchmark } from './footprint';
import { ingestBenchmark } from './ingest';
import { ingestWithWorkerBenchmark } from './ingest-with-worker';
import { pgReplicasBenchmark } from './pg-replicas';
import { ownerFanOutBenchmark } from './owner-fan-out';
import { renderBenchmark } from './render';
import { reportHistoryBenchmark } from './report-history';
import type { Benchmark } from './lib/types';

/**
 * Every benchmark `npm run bench` runs, in this order. To add one: write `bench/<name>.ts`
 * exporting a {@link Benchmark} and append it here (cheap, in-process ones first).
 */
export const BENCHMARKS: Benchmark[] = [
  renderBenchmark,
  reportHistoryBenchmark,
  cliFirstCallBenchmark,
  footprintBenchmark,
  ingestBenchmark,
  ingestWithWorkerBenchmark,
  ackUnderOutageBenchmark,
  endToEndBenchmark,
  burstBenchmark,
  enrichmentBenchmark,
  enrichmentStatesBenchmark,
  pgReplicasBenchmark,
  bigNetworkBenchmark,
  ownerFanOutBenchmark,
];
