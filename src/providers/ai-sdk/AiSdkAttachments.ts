import type { ModelMessage } from 'ai';

/** Where the bytes of inline images and files go, so that the log keeps a reference instead of the bytes. */
export interface AttachmentStore {
  /** Keeps the bytes (object storage, a CDN...) and returns the URL the model and the UI will fetch them from. */
  put(file: { data: Uint8Array; mediaType: string; filename?: string; sessionId: string }): Promise<URL | string>;
}

type Part = Record<string, unknown> & { type: string };

function inlineBytes(data: unknown): Uint8Array | null {
  if (data instanceof URL) return null;
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (typeof data === 'string') {
    if (/^(https?|blob):/.test(data)) return null;
    const match = /^data:[^;,]*(;base64)?,(.*)$/s.exec(data);
    if (match !== null) return match[1] ? Buffer.from(match[2]!, 'base64') : Buffer.from(decodeURIComponent(match[2]!));
    return Buffer.from(data, 'base64');
  }
  if (data !== null && typeof data === 'object' && (data as { type?: unknown }).type === 'data')
    return inlineBytes((data as { data: unknown }).data);
  return null;
}

async function externalizePart(part: Part, store: AttachmentStore, sessionId: string): Promise<Part> {
  const key = part.type === 'image' ? 'image' : part.type === 'file' || part.type === 'reasoning-file' ? 'data' : null;
  if (key === null) return part;
  const bytes = inlineBytes(part[key]);
  if (bytes === null) return part;
  const mediaType = typeof part.mediaType === 'string' ? part.mediaType : 'application/octet-stream';
  const url = await store.put({
    data: bytes,
    mediaType,
    ...(typeof part.filename === 'string' ? { filename: part.filename } : {}),
    sessionId,
  });
  return { ...part, [key]: url instanceof URL ? url : new URL(url) };
}

/**
 * The messages with every inline image or file (bytes, base64, data URLs) put in the store and replaced by
 * the URL it returned. URLs and provider file references are references already and stay as they are.
 */
export async function externalizeAttachments(
  messages: readonly ModelMessage[],
  store: AttachmentStore,
  sessionId: string,
): Promise<ModelMessage[]> {
  return Promise.all(
    messages.map(async (message) => {
      if ((message.role !== 'user' && message.role !== 'assistant') || typeof message.content === 'string') return message;
      const content = await Promise.all((message.content as Part[]).map((p) => externalizePart(p, store, sessionId)));
      return content.every((p, i) => p === (message.content as Part[])[i]) ? message : ({ ...message, content } as ModelMessage);
    }),
  );
}
