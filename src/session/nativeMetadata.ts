/**
 * Metadata key of a framework's own form of a message (see `chat/nativeMessages.ts`). Defined here, below
 * every layer that reads or rewrites events, so that redaction (in `service/`) can remove it with the content.
 */
export const METADATA_NATIVE = 'native';
