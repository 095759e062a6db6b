let blocked = [];

export function initialize(data) {
  blocked = data.blocked;
}

export async function resolve(specifier, context, next) {
  if (blocked.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
    const error = new Error(`Cannot find package '${specifier}' imported from ${context.parentURL}`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
