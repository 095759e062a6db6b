export type {
  RecordedDataset,
  RecordedEvent,
  RecordedProbe,
  RecordedRole,
  RecordedSession,
  RecordedToolCall,
} from './recorded/RecordedSession.js';
export { validateRecordedDataset } from './recorded/validateRecordedDataset.js';
export { toMessage } from './recorded/toMessage.js';
export { loadLocomo, normaliseLocomoEvidence, parseLocomoDate, type LocomoLoadOptions } from './loaders/loadLocomo.js';
export { loadTauBench } from './loaders/loadTauBench.js';
export { loadMiniSweAgent } from './loaders/loadMiniSweAgent.js';
export {
  loadNeutralFile,
  loadRecordedData,
  RECORDED_SOURCES,
  type LoadRecordedOptions,
  type RecordedSourceName,
} from './loaders/loadRecordedData.js';
export { ContextSnapshot, normaliseForMatch, type ProbeOutcome } from './metrics/ContextSnapshot.js';
export { orphanedToolResults } from './metrics/orphanedToolResults.js';
export { aggregateRuns, type ContenderSummary } from './metrics/aggregateRuns.js';
export {
  ContenderRegistry,
  checkContenderOptions,
  type Contender,
  type ContenderContext,
  type ContenderOptions,
  type ConfiguredStrategy,
  type HistoryItem,
  type OptionKind,
  type OptionSpec,
  type PeerContender,
  type PeerRunner,
  type PeerSelection,
  type StrategyContender,
} from './registry/ContenderRegistry.js';
export { createDefaultContenderRegistry } from './registry/defaultContenders.js';
export { PreparedSession, type ProbeTiming } from './replay/PreparedSession.js';
export { replayWithPeer, replayWithStrategy, type ReplayContext } from './replay/replaySession.js';
export type { RunMetrics } from './replay/RunMetrics.js';
export { CountingChatClient } from './replay/CountingChatClient.js';
export { createSummarizer, type Summarizer, type SummarizerSettings } from './replay/createSummarizer.js';
export {
  applyConfigFile,
  DEFAULT_CONTENDERS,
  fullConfig,
  quickConfig,
  type BenchConfig,
  type BenchRepositoryKind,
  type ContenderSpec,
  type ScalingConfig,
} from './BenchConfig.js';
export { runBench, type BenchResult, type BenchProgress, type DatasetInfo } from './runBench.js';
export { runScaling, growthFactors, type ScalingPoint } from './scaling/runScaling.js';
export { writeReport } from './report/writeReport.js';
export { createBenchProgram, notRun, QUICK_DURATION } from './cli.js';
export { main } from './main.js';
