// Runs in a fresh project that installed the packed tarball: the configuration file (YAML) chooses the store and a
// compaction profile through the DI module, as docs/profiles.md describes; zod and yaml come with the package.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Container } from 'inversify';
import { closeSessionCompaction, createSessionCompactionModule, EventFilter, Messages, TYPES } from 'session-compaction';

writeFileSync(
  'session-compaction.yaml',
  [
    'repository:',
    '  kind: sqlite',
    '  path: ./configured.db',
    'contextWindowTokens: 4000',
    'defaultProfile: short',
    'profiles:',
    '  short:',
    '    use: sliding-window',
    '    options:',
    '      maxEvents: 4',
    '',
  ].join('\n'),
);
const container = new Container();
await container.load(createSessionCompactionModule({ configFile: './session-compaction.yaml', logLevel: 'error' }));
const service = container.get(TYPES.SessionService);
const configuration = container.get(TYPES.Configuration);
const { compactionTrigger, compactionStrategy } = configuration.compaction();
const session = await service.create({ userId: 'configured' });
for (let i = 1; i <= 6; i++) {
  await service.appendMessage(session.id, Messages.user(`question ${i}`));
  await service.appendMessage(session.id, Messages.assistant(`answer ${i}`));
}
await service.compact(session.id, () => true, compactionStrategy);
const active = await service.getEvents(session.id, EventFilter.active());
await closeSessionCompaction(container);
if (active.length !== 4 || compactionTrigger === undefined) {
  console.error(`pack smoke test: configuration file through DI: expected 4 active events, got ${active.length}`);
  process.exit(1);
}
writeFileSync('configured-session.txt', session.id);
console.log('pack smoke test: configuration file through DI — ok');
