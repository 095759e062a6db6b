import { InvalidArgumentError, requireText } from '../../errors.js';
import { BUILT_IN_PROFILES } from './builtInProfiles.js';
import type {
  CompactionProfile,
  CompactionSetup,
  ProfileContext,
  ProfileSettings,
  ProfileTriggerSettings,
} from './CompactionProfile.js';

/** A named variant of another profile: its base and the settings it fixes. */
export interface ProfileDefinition extends ProfileSettings {
  /** The profile it is based on: a built-in or one registered earlier. */
  use: string;
  description?: string;
}

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function requireProfileName(name: unknown): string {
  const n = requireText(name, 'name');
  if (!PROFILE_NAME.test(n)) {
    throw new InvalidArgumentError(
      `profile name '${n}' must be 1–64 letters, digits, '.', '_' or '-' (starting with a letter or digit)`,
    );
  }
  return n;
}

/** Later settings win key by key; trigger settings and options are merged one level deep. */
function mergeSettings(base: ProfileSettings, over: ProfileSettings): ProfileSettings {
  const trigger: ProfileTriggerSettings = { ...base.trigger, ...over.trigger };
  const options = { ...base.options, ...over.options };
  return {
    ...(Object.keys(trigger).length > 0 ? { trigger } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

/**
 * Named compaction profiles (the CLI's `--profile`, the configuration file's `use:`). `withBuiltIns()` knows
 * 'sliding-window', 'token-budget', 'recursive', 'additive', 'cache-aware' and 'pressure-bands'; `register`
 * adds a profile of your own, `define` a named variant of an existing one (what a configuration file's
 * `profiles` section does). `create(name, context)` builds the trigger and strategy.
 */
export class CompactionProfileRegistry {
  private readonly profiles = new Map<string, CompactionProfile>();

  /** A registry with the built-in profiles. */
  static withBuiltIns(): CompactionProfileRegistry {
    const registry = new CompactionProfileRegistry();
    for (const p of BUILT_IN_PROFILES) registry.register(p);
    return registry;
  }

  /** Adds a profile; a name already taken is refused unless `replace` is set. */
  register(profile: CompactionProfile, options: { replace?: boolean } = {}): this {
    if (profile === null || typeof profile !== 'object') throw new InvalidArgumentError('profile must not be null');
    const name = requireProfileName(profile.name);
    if (typeof profile.create !== 'function') throw new InvalidArgumentError(`profile '${name}' must have a create function`);
    if (!Array.isArray(profile.optionNames)) throw new InvalidArgumentError(`profile '${name}' must list its optionNames`);
    if (this.profiles.has(name) && options?.replace !== true) {
      throw new InvalidArgumentError(
        `a compaction profile named '${name}' is already registered (pass { replace: true } to replace it)`,
      );
    }
    this.profiles.set(name, profile);
    return this;
  }

  /** Registers `name` as `definition.use` with the definition's trigger settings and options fixed. */
  define(name: string, definition: ProfileDefinition, options: { replace?: boolean } = {}): this {
    if (definition === null || typeof definition !== 'object') throw new InvalidArgumentError('definition must not be null');
    const base = this.get(definition.use);
    const fixed: ProfileSettings = {
      ...(definition.trigger !== undefined ? { trigger: definition.trigger } : {}),
      ...(definition.options !== undefined ? { options: definition.options } : {}),
    };
    checkOptions(base, fixed, requireProfileName(name));
    return this.register(
      {
        name,
        description: definition.description ?? `${base.description} (${name}: based on '${base.name}')`,
        needsChatClient: base.needsChatClient,
        optionNames: base.optionNames,
        create: (context, settings) => base.create(context, mergeSettings(fixed, settings)),
      },
      options,
    );
  }

  get(name: string): CompactionProfile {
    const profile = typeof name === 'string' ? this.profiles.get(name) : undefined;
    if (profile === undefined) {
      throw new InvalidArgumentError(`Unknown compaction profile '${String(name)}' (known: ${this.names().join(', ')})`);
    }
    return profile;
  }

  has(name: string): boolean {
    return this.profiles.has(name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.profiles.keys()];
  }

  /** The trigger and strategy of profile `name`, built for `context`, with `settings` on top of the profile's own. */
  create(name: string, context: ProfileContext, settings: ProfileSettings = {}): CompactionSetup {
    const profile = this.get(name);
    if (context === null || typeof context !== 'object') throw new InvalidArgumentError('context must not be null');
    checkOptions(profile, settings ?? {}, name);
    return { profile: name, ...profile.create(context, settings ?? {}) };
  }
}

function checkOptions(profile: CompactionProfile, settings: ProfileSettings, name: string): void {
  for (const key of Object.keys(settings.options ?? {})) {
    if (!profile.optionNames.includes(key)) {
      throw new InvalidArgumentError(
        `unknown option '${key}' for profile '${name}' (known: ${profile.optionNames.join(', ') || 'none'})`,
      );
    }
  }
}
