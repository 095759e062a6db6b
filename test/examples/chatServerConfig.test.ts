import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { configFromEnv } from '../../examples/chat-server/config.js';
import { APP_TYPES, createChatContainer } from '../../examples/chat-server/container.js';
import {
  ConfigurationError,
  InMemorySessionRepository,
  PressureBandCompactionStrategy,
  TYPES,
  type SessionMemory,
} from 'session-compaction';
import { silent } from '../chat/support/harness.js';

describe('examples/chat-server with a configuration file (CONFIG_FILE)', function () {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'chat-config-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("takes the repository and the default profile's trigger and strategy from the file", function () {
    const file = join(dir, 'server.yaml');
    writeFileSync(
      file,
      [
        'repository: { kind: memory }',
        'contextWindowTokens: 12000',
        'defaultProfile: agent',
        'profiles:',
        '  agent: { use: pressure-bands }',
      ].join('\n'),
    );
    const config = configFromEnv({ CONFIG_FILE: file, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(config.configFile).to.equal(file);
    const container = createChatContainer(config, { logger: silent });
    expect(container.get(TYPES.SessionRepository)).to.be.instanceOf(InMemorySessionRepository);
    const memory = container.get<SessionMemory>(APP_TYPES.SessionMemory);
    const strategy = (memory as unknown as { strategy: unknown }).strategy;
    expect(strategy).to.be.instanceOf(PressureBandCompactionStrategy);
    expect((strategy as PressureBandCompactionStrategy).trigger.contextWindowTokens).to.equal(12_000);
  });

  it('refuses to start on a bad file, naming the key', function () {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'profiles:\n  default: { use: recursive, trigger: { thresholdRatio: high } }\n');
    expect(() => createChatContainer(configFromEnv({ CONFIG_FILE: file }), { logger: silent }))
      .to.throw(ConfigurationError)
      .with.property('message')
      .that.includes('profiles.default.trigger.thresholdRatio: expected a number in (0, 1], got "high"');
  });
});
