import { createRequire } from 'node:module';
import { IllegalStateError } from './errors.js';

const require = createRequire(import.meta.url);

/**
 * Loads an optional package (a database driver, the OpenAI SDK) the first time a feature needs it, so that
 * importing the package root loads none of them and an application installs only the ones it uses.
 * Synchronous on purpose: repository constructors are synchronous, and every one of these packages ships
 * a CommonJS entry.
 */
export function requireOptional<T>(packageName: string, feature: string): T {
  try {
    return require(packageName) as T;
  } catch (error) {
    throw explained(error, packageName, feature);
  }
}

/**
 * The asynchronous form of `requireOptional`, for a package that is ESM first (e.g. transformers.js) and a
 * feature that is asynchronous anyway: `import()` loads its ESM entry, as the application's own import would.
 */
export async function importOptional<T>(packageName: string, feature: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    throw explained(error, packageName, feature);
  }
}

/** The error to throw for a failed load: one that says what to install when the package itself is missing. */
function explained(error: unknown, packageName: string, feature: string): unknown {
  if (!isMissing(error, packageName)) return error;
  return new IllegalStateError(
    `${feature} needs the optional package '${packageName}', which is not installed: run npm install ${packageName}`,
    { cause: error },
  );
}

function isMissing(error: unknown, packageName: string): boolean {
  const e = error as { code?: unknown; message?: unknown };
  // A missing transitive dependency of an installed driver is a broken install, not a missing package.
  return (
    (e.code === 'MODULE_NOT_FOUND' || e.code === 'ERR_MODULE_NOT_FOUND') &&
    typeof e.message === 'string' &&
    e.message.includes(`'${packageName}'`)
  );
}
