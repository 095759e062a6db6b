import { IllegalStateError } from '../../errors.js';

/**
 * `@langchain/core` is an optional peer dependency: this subpath loads it when it is imported, and says so
 * plainly when it is missing instead of failing deep inside a class definition.
 */
async function load() {
  try {
    const [messages, chatHistory] = await Promise.all([
      import('@langchain/core/messages'),
      import('@langchain/core/chat_history'),
    ]);
    return { messages, chatHistory };
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new IllegalStateError(
        "session-compaction/langchain needs the optional peer dependency '@langchain/core' (npm install @langchain/core)",
        { cause: error },
      );
    }
    throw error;
  }
}

export const langchain = await load();
