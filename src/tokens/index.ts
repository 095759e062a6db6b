export { type TokenCountEstimator, CharacterTokenCountEstimator } from './TokenCountEstimator.js';
export {
  TiktokenTokenCountEstimator,
  defaultTokenCountEstimator,
  type TiktokenEncodingName,
  type TiktokenTokenCountEstimatorOptions,
} from './TiktokenTokenCountEstimator.js';
export { MAX_PIECE_CHARS } from './BpeTokenCounter.js';
export { estimateEventTokens, estimateEventsTokens } from './eventTokens.js';
export { calibrationRatio, updateCalibration, METADATA_TOKEN_CALIBRATION, type TokenCalibration } from './calibration.js';
export { PROVIDER_PRESETS, providerPreset, type ModelPrices, type PromptCacheRules, type ProviderPreset } from './ModelPrices.js';
export { priceUsage, type UsageRecord } from './UsageRecord.js';
