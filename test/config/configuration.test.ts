import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Container } from 'inversify';
import {
  CompactionProfileRegistry,
  ConfigurationError,
  ContextWindowTrigger,
  InMemorySessionRepository,
  InvalidArgumentError,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  ResolvedConfiguration,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  TYPES,
  createSessionCompactionModule,
  loadConfigurationFile,
  type ChatClient,
  type DefaultSessionService,
  type SessionRepository,
} from 'session-compaction';
import { parseConfiguration } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';

const exampleFile = fileURLToPath(new URL('../../examples/session-compaction.yaml', import.meta.url));

/** The ConfigurationError thrown by `fn`, with its issues. */
function configError(fn: () => unknown): ConfigurationError {
  const error = expectThrows(fn, ConfigurationError);
  expect(error).to.be.instanceOf(InvalidArgumentError);
  return error as ConfigurationError;
}

describe('Configuration file', function () {
  let dir: string;
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'sc-config-'));
  });
  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  describe('validation', function () {
    it('names the path of a bad key and the value found', function () {
      const error = configError(() =>
        parseConfiguration('profiles:\n  default:\n    use: recursive\n    trigger:\n      thresholdRatio: high\n'),
      );
      expect(error.message).to.include('profiles.default.trigger.thresholdRatio: expected a number in (0, 1], got "high"');
      expect(error.issues).to.deep.equal([
        { path: 'profiles.default.trigger.thresholdRatio', message: 'expected a number in (0, 1], got "high"' },
      ]);
    });

    it('reports every problem at once, unknown keys included', function () {
      const error = configError(() =>
        parseConfiguration(
          JSON.stringify({ repository: { kind: 'mysql' }, contextWindowTokens: -5, profiles: { a: { use: 'x', extra: 1 } } }),
          { format: 'json' },
        ),
      );
      const paths = error.issues.map((i) => i.path);
      expect(paths).to.include.members(['repository.kind', 'contextWindowTokens', 'profiles.a.extra']);
      expect(error.message).to.include("repository.kind: expected one of 'memory', 'sqlite', 'postgres', 'redis', got \"mysql\"");
      expect(error.message).to.include('contextWindowTokens: expected a positive integer, got -5');
      expect(error.message).to.include('profiles.a.extra: unknown key');
    });

    it('refuses secrets in the file, wherever they are', function () {
      const error = configError(() =>
        parseConfiguration(
          'summarizer:\n  model: m\n  apiKey: sk-123\nprofiles:\n  p:\n    use: recursive\n    options:\n      password: x\n',
        ),
      );
      expect(error.issues.map((i) => i.path)).to.deep.equal(['summarizer.apiKey', 'profiles.p.options.password']);
      expect(error.message).to.include('secrets are read from environment variables only');
      expect(error.message).to.not.include('sk-123');
    });

    it('refuses a repository URL with a password and points to urlEnv', function () {
      const error = configError(() => parseConfiguration('repository:\n  kind: postgres\n  url: postgres://app:s3cret@db/app\n'));
      expect(error.message).to.include('repository.url: credentials must not be in the configuration file');
      expect(error.message).to.not.include('s3cret');
    });

    it('reports a YAML syntax error with its line', function () {
      const error = configError(() => parseConfiguration('profiles:\n  a: [1, 2\nlogLevel: warn\n'));
      expect(error.message).to.match(/not valid YAML \(line \d+\)/);
    });

    it('checks profiles by building them: unknown base, unknown option, bad option value, unknown default', function () {
      const error = configError(
        () =>
          new ResolvedConfiguration({
            defaultProfile: 'nope',
            profiles: {
              a: { use: 'heavy' },
              b: { use: 'sliding-window', options: { maxEvent: 3 } },
              c: { use: 'sliding-window', options: { maxEvents: 0 } },
            },
          }),
      );
      expect(error.issues.map((i) => i.path)).to.deep.equal(['profiles.a', 'profiles.b', 'profiles.c', 'defaultProfile']);
      expect(error.message).to.include("profiles.a: Unknown compaction profile 'heavy'");
      expect(error.message).to.include("profiles.b: unknown option 'maxEvent' for profile 'b'");
      expect(error.message).to.include('profiles.c: maxEvents must be greater than 0');
      expect(error.message).to.include("defaultProfile: unknown profile 'nope'");
    });

    it('says a profile option that is not a number was refused for its type, not for its size', function () {
      const error = configError(
        () => new ResolvedConfiguration({ profiles: { d: { use: 'sliding-window', options: { maxEvents: 'abc' } } } }),
      );
      expect(error.message).to.include('profiles.d: maxEvents must be greater than 0 (got "abc", not an integer)');
    });

    it('names the file in the error and reports an unreadable file', function () {
      const path = write('bad.json', '{"logLevel": "loud"}');
      expect(configError(() => loadConfigurationFile(path)).message).to.include(`Invalid configuration ${path}`);
      expect(configError(() => loadConfigurationFile(join(dir, 'missing.yaml'))).message).to.include('cannot be read');
    });
  });

  describe('resolution', function () {
    it('the example configuration in examples/ is valid and resolves', function () {
      const resolved = new ResolvedConfiguration(loadConfigurationFile(exampleFile), { env: { PG_URL: 'postgres://x/y' } });
      expect(resolved.profiles.names()).to.include('default');
      expect(resolved.compaction(resolved.defaultProfile, { chatClient: { call: async () => 's' } }).profile).to.equal(
        resolved.defaultProfile,
      );
    });

    it('profiles based on built-ins and on each other, with the default profile, window, retention and recall', function () {
      const resolved = new ResolvedConfiguration(
        parseConfiguration(
          [
            'contextWindowTokens: 32000',
            'profiles:',
            '  default:',
            '    use: sliding-window',
            '    trigger: { thresholdRatio: 0.6 }',
            '    options: { maxEvents: 12 }',
            '  tighter:',
            '    use: default',
            '    options: { maxEvents: 6 }',
            'retention: { archivedEventsOlderThanDays: 30, sessionsIdleLongerThanDays: 90 }',
            'recall: { enabled: true, maxTokens: 800 }',
            'sessions: { timeToLiveDays: 7 }',
          ].join('\n'),
        ),
      );
      expect(resolved.defaultProfile).to.equal('default');
      expect(resolved.contextWindowTokens).to.equal(32_000);
      const setup = resolved.compaction();
      expect((setup.compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(12);
      expect((setup.compactionTrigger as ContextWindowTrigger).thresholdTokens).to.equal(19_200);
      const tighter = resolved.compaction('tighter');
      expect((tighter.compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(6);
      expect((tighter.compactionTrigger as ContextWindowTrigger).thresholdRatio).to.equal(0.6);
      expect(resolved.retentionPolicy).to.deep.equal({
        archivedEventsOlderThanMs: 30 * 86_400_000,
        sessionsIdleLongerThanMs: 90 * 86_400_000,
      });
      expect(resolved.recall).to.deep.equal({ maxTokens: 800 });
      expect(resolved.defaultTimeToLiveMs).to.equal(7 * 86_400_000);
    });

    it('without profiles the default is sliding-window; a model name sizes the window', function () {
      const resolved = new ResolvedConfiguration({ model: 'gpt-4o-mini' });
      expect(resolved.defaultProfile).to.equal('sliding-window');
      expect(resolved.contextWindowTokens).to.equal(128_000);
    });

    it('a registry of your own: the file can use your registered profiles', function () {
      const registry = CompactionProfileRegistry.withBuiltIns().define('mine', {
        use: 'sliding-window',
        options: { maxEvents: 3 },
      });
      const resolved = new ResolvedConfiguration({ profiles: { default: { use: 'mine' } } }, { registry });
      expect((resolved.compaction().compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(3);
    });

    it('reads the summariser key and the repository URL from the environment only', function () {
      const resolved = new ResolvedConfiguration(
        {
          summarizer: { model: 'llama3.1:8b', baseURL: 'http://127.0.0.1:11434/v1', apiKeyEnv: 'MY_KEY' },
          repository: { kind: 'postgres', urlEnv: 'MY_DB' },
        },
        { env: { MY_KEY: 'k-1', MY_DB: 'postgres://u:p@h/db' } },
      );
      const client = resolved.createChatClient();
      expect(client).to.be.instanceOf(OpenAIChatClient);
      expect(client!.model).to.equal('llama3.1:8b');
      expect(resolved.repository()).to.deep.equal({ kind: 'postgres', url: 'postgres://u:p@h/db' });
      const unset = new ResolvedConfiguration({ repository: { kind: 'postgres', urlEnv: 'MY_DB' } }, { env: {} });
      expect(configError(() => unset.repository()).message).to.include(
        'repository.urlEnv: the environment variable MY_DB is not set',
      );
    });
  });

  describe('createSessionCompactionModule', function () {
    it('takes the repository, the summariser, the profiles and the session TTL from a configuration file', async function () {
      const path = write(
        'app.yaml',
        [
          'repository:',
          '  kind: sqlite',
          `  path: ${JSON.stringify(join(dir, 'sessions.db'))}`,
          'summarizer:',
          '  model: llama3.1:8b',
          '  baseURL: http://127.0.0.1:11434/v1',
          'contextWindowTokens: 16000',
          'profiles:',
          '  default: { use: recursive, options: { maxEventsToKeep: 6 } }',
          'sessions: { timeToLiveDays: 2 }',
          'logLevel: error',
        ].join('\n'),
      );
      const container = new Container();
      await container.load(createSessionCompactionModule({ configFile: path }));
      const repository = container.get<SessionRepository>(TYPES.SessionRepository);
      expect(repository).to.be.instanceOf(SqliteSessionRepository);
      const chatClient = container.get<ChatClient>(TYPES.ChatClient);
      expect(chatClient).to.be.instanceOf(OpenAIChatClient);
      const resolved = container.get<ResolvedConfiguration>(TYPES.Configuration);
      const setup = resolved.compaction(undefined, { chatClient });
      expect((setup.compactionStrategy as RecursiveSummarizationCompactionStrategy).maxEventsToKeep).to.equal(6);
      expect(container.get<CompactionProfileRegistry>(TYPES.CompactionProfiles).has('default')).to.equal(true);
      const service = container.get<DefaultSessionService>(TYPES.SessionService);
      const session = await service.create({ userId: 'u' });
      expect(session.expiresAt!.getTime() - session.createdAt.getTime()).to.equal(2 * 86_400_000);
      await repository.close?.();
    });

    it('explicit options win over the file', async function () {
      const path = write('app.yaml', 'repository: { kind: sqlite }\n');
      const repository = new InMemorySessionRepository();
      const container = new Container();
      await container.load(createSessionCompactionModule({ configFile: path, repository }));
      expect(container.get(TYPES.SessionRepository)).to.equal(repository);
    });

    it('fails at module creation on a bad file, naming the key', function () {
      const path = write('bad.yaml', 'profiles:\n  default:\n    use: recursive\n    trigger: { thresholdRatio: high }\n');
      const error = configError(() => createSessionCompactionModule({ configFile: path }));
      expect(error.message).to.include('profiles.default.trigger.thresholdRatio: expected a number in (0, 1], got "high"');
    });

    it('without a configuration it binds the built-in profiles', async function () {
      const container = new Container();
      await container.load(createSessionCompactionModule({ repository: 'memory' }));
      expect(container.get<CompactionProfileRegistry>(TYPES.CompactionProfiles).names()).to.include('pressure-bands');
      expect(container.isBound(TYPES.Configuration)).to.equal(false);
    });
  });
});
