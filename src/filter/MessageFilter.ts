import { InvalidArgumentError } from '../errors.js';
import { messageText, type Message, type MessageType } from '../session/Message.js';

/**
 * Write-side filter: decides which messages the chat integration persists. Composable with and/or/negate.
 */
export class MessageFilter {
  private constructor(private readonly predicate: (message: Message) => boolean) {}

  static of(predicate: (message: Message) => boolean): MessageFilter {
    if (typeof predicate !== 'function') throw new InvalidArgumentError('predicate must not be null');
    return new MessageFilter(predicate);
  }

  static all(): MessageFilter {
    return new MessageFilter(() => true);
  }

  /**
   * Rejects only assistant messages with blank text and no tool calls: providers such as Bedrock emit such
   * empty frames after a tool call, and replaying them makes the next request fail validation.
   */
  static skipEmptyMessages(): MessageFilter {
    return new MessageFilter((m) => {
      if (m.type !== 'assistant') return true;
      const blank = m.text === null || m.text.trim() === '';
      return !(blank && (m.toolCalls?.length ?? 0) === 0);
    });
  }

  static byMessageType(...types: MessageType[]): MessageFilter {
    if (types.length === 0) throw new InvalidArgumentError('types must not be empty');
    const set = new Set(types);
    return new MessageFilter((m) => set.has(m.type));
  }

  static containsText(keyword: string): MessageFilter {
    if (typeof keyword !== 'string' || keyword.trim() === '') throw new InvalidArgumentError('keyword must not be blank');
    const needle = keyword.toLowerCase();
    return new MessageFilter((m) => {
      const text = messageText(m);
      return text !== null && text.toLowerCase().includes(needle);
    });
  }

  shouldPersist(message: Message): boolean {
    return this.predicate(message);
  }

  and(other: MessageFilter): MessageFilter {
    const o = MessageFilter.require(other);
    return new MessageFilter((m) => this.predicate(m) && o.shouldPersist(m));
  }

  or(other: MessageFilter): MessageFilter {
    const o = MessageFilter.require(other);
    return new MessageFilter((m) => this.predicate(m) || o.shouldPersist(m));
  }

  negate(): MessageFilter {
    return new MessageFilter((m) => !this.predicate(m));
  }

  private static require(other: MessageFilter | null | undefined): MessageFilter {
    if (other === null || other === undefined) throw new InvalidArgumentError('other must not be null');
    return other;
  }
}
