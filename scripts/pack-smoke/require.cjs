// Runs in a fresh project that installed the packed tarball: a CommonJS application (NestJS's default, and any
// backend compiled to CommonJS) loads the package with require() — Node's require(esm), 20.19+ / 22.12+.
require('reflect-metadata');
const { Container } = require('inversify');
const { closeSessionCompaction, createSessionCompactionModule, Messages, TYPES } = require('session-compaction');
const { SqliteSessionRepository } = require('session-compaction/sqlite');

(async () => {
  if (typeof SqliteSessionRepository !== 'function')
    throw new Error('require: session-compaction/sqlite has no SqliteSessionRepository');
  const container = new Container();
  await container.load(createSessionCompactionModule({ repository: 'memory', logLevel: 'error' }));
  const service = container.get(TYPES.SessionService);
  const session = await service.create({ userId: 'cjs' });
  await service.appendMessage(session.id, Messages.user('hello from require()'));
  const events = await service.getEvents(session.id);
  if (events.length !== 1) throw new Error(`require: expected 1 event, got ${events.length}`);
  await closeSessionCompaction(container);
  console.log('pack smoke test: require() from CommonJS — ok');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
