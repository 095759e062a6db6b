/**
 * Atomic session-metadata updates for any SessionRepository with `updateSessionMetadata`, exercised through
 * `DefaultSessionService.updateMetadata` from two service instances over the same store (two "app instances"
 * with their own connections, for a durable store): concurrent increments all land, a failing update
 * changes nothing, a missing session is reported as before.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  DefaultSessionService,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  type SessionRepository,
  createDefaultLogger,
} from 'session-compaction';
import type { MetadataUpdatingRepository } from 'session-compaction/spi';
import type { SessionMetadataUpdate } from 'session-compaction/spi';
import { rejection } from '../support/rejection.js';

const logger = createDefaultLogger({ silent: true });
const INCREMENTS = 50;

const counterOf = (session: Session | null) => session?.metadata.counter;

export function atomicMetadataSuite(
  label: string,
  makeInstances: () => Array<SessionRepository & MetadataUpdatingRepository>,
): void {
  describe(`atomic metadata updates over ${label}`, function () {
    let instances: Array<SessionRepository & MetadataUpdatingRepository>;
    let services: DefaultSessionService[];

    beforeEach(function () {
      instances = makeInstances();
      services = instances.map((r) => new DefaultSessionService(r, { logger }));
    });
    afterEach(async function () {
      await Promise.all([...new Set(instances)].map((r) => r.close?.()));
    });

    async function seeded(metadata: Record<string, unknown>): Promise<string> {
      const id = `meta-${randomUUID()}`;
      await instances[0]!.save(Session.create({ id, userId: 'u', metadata }));
      return id;
    }

    it(`${INCREMENTS} concurrent increments from two service instances all land (the counter ends at exactly ${INCREMENTS})`, async function () {
      this.timeout(60_000);
      const id = await seeded({ counter: 0, keep: 'me' });
      await instances[0]!.appendEvent(SessionEvent.create({ sessionId: id, id: 'e1', message: Messages.user('hi') }));
      let calls = 0;
      const increment: SessionMetadataUpdate = (m) => {
        calls++;
        return { ...m, counter: (m.counter as number) + 1 };
      };
      const written = await Promise.all(
        Array.from({ length: INCREMENTS }, (_, i) => services[i % services.length]!.updateMetadata(id, increment)),
      );
      // Each call returns the session it wrote: every value from 1 to N exactly once.
      expect(written.map(counterOf).sort((a, b) => (a as number) - (b as number))).to.deep.equal(
        Array.from({ length: INCREMENTS }, (_, i) => i + 1),
      );
      for (const repository of instances) {
        const session = await repository.findById(id);
        expect(session?.metadata).to.deep.equal({ counter: INCREMENTS, keep: 'me' });
        // The log and its version are not the metadata's business.
        expect(await repository.getEventVersion(id)).to.equal(1);
        expect((await repository.findEvents(id)).map((e) => e.id)).to.deep.equal(['e1']);
      }
      expect(calls).to.be.at.least(INCREMENTS);
      if (calls > INCREMENTS) console.log(`      ${label}: ${calls - INCREMENTS} update re-runs after a lost compare-and-set`);
    });

    it('an update that throws changes nothing and its error reaches the caller', async function () {
      const id = await seeded({ counter: 7 });
      const error = await rejection(
        services[0]!.updateMetadata(id, () => {
          throw new Error('refused by the update');
        }),
      );
      expect(error.message).to.equal('refused by the update');
      expect(counterOf(await instances[1]!.findById(id))).to.equal(7);
    });

    it('an update returning invalid metadata changes nothing (InvalidArgumentError)', async function () {
      const id = await seeded({ counter: 7 });
      const error = await rejection(services[1]!.updateMetadata(id, (m) => ({ ...m, counter: Number.POSITIVE_INFINITY })));
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect(counterOf(await instances[0]!.findById(id))).to.equal(7);
    });

    it('a missing session gives "Session not found: <id>" and the repository method null', async function () {
      const id = `missing-${randomUUID()}`;
      const error = await rejection(services[0]!.updateMetadata(id, (m) => ({ ...m, counter: 1 })));
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect(error.message).to.equal(`Session not found: ${id}`);
      expect(await instances[0]!.updateSessionMetadata(id, (m) => ({ ...m, counter: 1 }))).to.equal(null);
      expect(await instances[0]!.findById(id)).to.equal(null);
    });
  });
}
