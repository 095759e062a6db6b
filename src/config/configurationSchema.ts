import type { z as Zod } from 'zod';

type Z = typeof Zod;

const show = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

/**
 * The configuration file's schema, built from a zod instance the loader requires on first use (so importing
 * the package root never loads zod). Every object is strict: an unknown or misspelt key is an error, not a
 * silent default. Messages say what was expected and what was found; the loader prefixes the key's path.
 */
export function configurationSchema(z: Z) {
  const expected = (what: string) => (issue: { input?: unknown }) => `expected ${what}, got ${show(issue.input)}`;
  const ratio = () => {
    const error = expected('a number in (0, 1]');
    return z.number({ error }).gt(0, { error }).lte(1, { error });
  };
  const positiveInt = () => {
    const error = expected('a positive integer');
    return z.number({ error }).int({ error }).positive({ error });
  };
  const nonNegativeInt = () => {
    const error = expected('an integer >= 0');
    return z.number({ error }).int({ error }).nonnegative({ error });
  };
  const positive = () => {
    const error = expected('a number greater than 0');
    return z.number({ error }).positive({ error });
  };
  const text = () => {
    const error = expected('a non-empty string');
    return z.string({ error }).trim().min(1, { error });
  };
  const envName = () => {
    const error = expected('the name of an environment variable');
    return z.string({ error }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error });
  };
  const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
    z.enum(values, { error: expected(`one of ${values.map((v) => `'${v}'`).join(', ')}`) });
  const bool = () => z.boolean({ error: expected('true or false') });

  const trigger = z.strictObject({
    thresholdRatio: ratio().optional(),
    minTokens: nonNegativeInt().optional(),
    reserveTokens: nonNegativeInt().optional(),
    systemPromptTokens: nonNegativeInt().optional(),
    toolSchemaTokens: nonNegativeInt().optional(),
  });
  const profile = z.strictObject({
    use: text(),
    description: text().optional(),
    trigger: trigger.optional(),
    options: z.record(z.string(), z.unknown(), { error: expected('an object of strategy options') }).optional(),
  });
  return z.strictObject({
    repository: z
      .strictObject({
        kind: oneOf(['memory', 'sqlite', 'postgres', 'redis'] as const),
        path: text().optional(),
        url: text().optional(),
        urlEnv: envName().optional(),
        prefix: text().optional(),
        initializeSchema: bool().optional(),
      })
      .optional(),
    summarizer: z
      .strictObject({
        model: text(),
        baseURL: z.url({ error: expected('an http(s) URL'), protocol: /^https?$/ }).optional(),
        apiKeyEnv: envName().optional(),
        timeoutMs: positiveInt().optional(),
        maxRetries: nonNegativeInt().optional(),
        temperature: z
          .number({ error: expected('a number in [0, 2]') })
          .min(0, { error: expected('a number in [0, 2]') })
          .max(2, { error: expected('a number in [0, 2]') })
          .optional(),
      })
      .optional(),
    contextWindowTokens: positiveInt().optional(),
    model: text().optional(),
    defaultProfile: text().optional(),
    profiles: z.record(z.string(), profile, { error: expected('an object of named profiles') }).optional(),
    recall: z
      .strictObject({
        enabled: bool().optional(),
        maxTokens: positiveInt().optional(),
        share: ratio().optional(),
        neighbors: nonNegativeInt().optional(),
        limit: positiveInt().optional(),
        placement: oneOf(['before-last-user', 'after-system'] as const).optional(),
      })
      .optional(),
    retention: z
      .strictObject({
        archivedEventsOlderThanDays: positive().optional(),
        maxArchivedEventsPerSession: nonNegativeInt().optional(),
        sessionsIdleLongerThanDays: positive().optional(),
      })
      .optional(),
    sessions: z.strictObject({ timeToLiveDays: positive().optional() }).optional(),
    logLevel: oneOf(['error', 'warn', 'info', 'debug'] as const).optional(),
  });
}
