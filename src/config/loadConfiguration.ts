import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import type { z as Zod } from 'zod';
import type * as Yaml from 'yaml';
import { configurationSchema } from './configurationSchema.js';
import {
  ConfigurationError,
  type ConfigurationIssue,
  type SessionCompactionConfiguration,
} from './SessionCompactionConfiguration.js';

const require = createRequire(import.meta.url);

/** Keys that would hold a secret: refused anywhere in the file, with a pointer to the environment. */
const SECRET_KEYS = new Set(['apikey', 'api_key', 'password', 'passwd', 'secret', 'accesstoken', 'access_token', 'authtoken']);

export interface ParseConfigurationOptions {
  /** Default 'yaml' (which also reads JSON). */
  format?: 'yaml' | 'json';
  /** Named in error messages, e.g. the file path; default '(inline)'. */
  source?: string;
}

/** Zod and yaml are loaded on the first configuration read, never by the package root. */
function zod(): typeof Zod {
  return (require('zod') as { z: typeof Zod }).z;
}

function secretIssues(value: unknown, path: string[], out: ConfigurationIssue[]): void {
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    const here = [...path, key];
    if (SECRET_KEYS.has(key.toLowerCase())) {
      out.push({
        path: here.join('.'),
        message: 'secrets are read from environment variables only, never from the configuration file (use apiKeyEnv or urlEnv)',
      });
    } else {
      secretIssues(child, here, out);
    }
  }
}

function urlIssues(config: SessionCompactionConfiguration, out: ConfigurationIssue[]): void {
  const url = config.repository?.url;
  if (url === undefined) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    out.push({ path: 'repository.url', message: `expected a URL, got ${JSON.stringify(url)}` });
    return;
  }
  if (parsed.password !== '') {
    out.push({
      path: 'repository.url',
      message: 'credentials must not be in the configuration file: put the URL in an environment variable and name it in urlEnv',
    });
  }
  if (config.repository?.urlEnv !== undefined) {
    out.push({ path: 'repository.url', message: 'give url or urlEnv, not both' });
  }
}

function parseText(text: string, options: ParseConfigurationOptions, source: string): unknown {
  if (options.format === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new ConfigurationError(source, [{ path: '', message: `not valid JSON: ${(error as Error).message}` }], {
        cause: error,
      });
    }
  }
  const yaml = require('yaml') as typeof Yaml;
  const doc = yaml.parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigurationError(
      source,
      doc.errors.map((e) => ({
        path: '',
        message: `not valid YAML${e.linePos !== undefined ? ` (line ${e.linePos[0].line})` : ''}: ${e.message.split('\n')[0]}`,
      })),
    );
  }
  return doc.toJS() as unknown;
}

/**
 * Validates a configuration (YAML or JSON text). Every problem is reported at once, each with the dotted
 * path of its key, e.g. `profiles.default.trigger.thresholdRatio: expected a number in (0, 1], got "high"`.
 * Profiles are checked by `ResolvedConfiguration` (names, options); this checks the shape and the secrets.
 */
export function parseConfiguration(text: string, options: ParseConfigurationOptions = {}): SessionCompactionConfiguration {
  const source = options.source ?? '(inline)';
  if (typeof text !== 'string')
    throw new ConfigurationError(source, [{ path: '', message: 'expected the text of a configuration' }]);
  const raw = parseText(text, options, source) ?? {};
  return validateConfiguration(raw, source);
}

/** Validates an already parsed configuration object (e.g. built in code or read from elsewhere). */
export function validateConfiguration(raw: unknown, source = '(inline)'): SessionCompactionConfiguration {
  const issues: ConfigurationIssue[] = [];
  secretIssues(raw, [], issues);
  if (issues.length > 0) throw new ConfigurationError(source, issues);
  const result = configurationSchema(zod()).safeParse(raw, { reportInput: true });
  if (!result.success) {
    throw new ConfigurationError(
      source,
      result.error.issues.map((issue) => {
        const path = issue.path.map(String);
        if (issue.code === 'unrecognized_keys') {
          return { path: [...path, issue.keys[0] ?? ''].join('.'), message: `unknown key (${issue.keys.join(', ')})` };
        }
        return { path: path.join('.'), message: issue.message };
      }),
    );
  }
  const config = result.data as SessionCompactionConfiguration;
  urlIssues(config, issues);
  if (issues.length > 0) throw new ConfigurationError(source, issues);
  return config;
}

/** Reads and validates a configuration file: `.json` as JSON, anything else as YAML. Synchronous, for module setup. */
export function loadConfigurationFile(path: string): SessionCompactionConfiguration {
  if (typeof path !== 'string' || path.trim() === '') {
    throw new ConfigurationError('(no file)', [{ path: '', message: 'path must not be blank' }]);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(path, [{ path: '', message: `cannot be read: ${(error as Error).message}` }], { cause: error });
  }
  return parseConfiguration(text, { source: path, format: extname(path).toLowerCase() === '.json' ? 'json' : 'yaml' });
}
